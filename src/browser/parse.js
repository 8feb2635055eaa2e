// What the module leaves to the browser's own parsers: a stored record's text read with
// `JSON.parse`, field by field for the core's rules (record.rs), and the HTTP-dates of
// `Retry-After` (http.rs). The core's parser and date reader are the reference that the
// browser tests (tests/web_parsing.rs) hold these to. The package joins it into idemkey.js
// with glue.js (scripts/post-pack.sh).

// The fields of a stored record, in the order of the core's `record_read::Field`: the
// record's own, then its response's.
const RECORD_FIELDS = ["v", "rev", "key", "scope", "fp", "state", "attempts", "createdAt", "expiresAt", "updatedAt", "response"];
const RESPONSE_FIELDS = ["status", "body", "replayed"];

/**
 * A stored record's text parsed by the browser: the values of its fields in that order
 * (the response's undefined when it is no object; an array as NaN, which no rule takes for
 * an object), or why it is no record.
 */
export function readRecord(text) {
  let r;
  try {
    r = JSON.parse(text);
  } catch (e) {
    return "not JSON: " + e.message;
  }
  const isObject = (v) => typeof v == "object" && v !== null && !Array.isArray(v);
  if (!isObject(r)) return "not a JSON object";
  const o = isObject(r.response) ? r.response : {};
  // Own properties only: a page's additions to Object.prototype are no record's fields.
  const field = (obj, k) => (!{}.hasOwnProperty.call(obj, k) ? undefined : Array.isArray(obj[k]) ? NaN : obj[k]);
  return [...RECORD_FIELDS.map((k) => field(r, k)), ...RESPONSE_FIELDS.map((k) => field(o, k))];
}

// The forms of an HTTP-date (RFC 9110 §5.6.7), between runs of ASCII whitespace as the core
// splits them: IMF-fixdate (Sun, 06 Nov 1994 08:49:37 GMT), RFC 850 (Sunday, 06-Nov-94
// 08:49:37 GMT) and asctime (Sun Nov  6 08:49:37 1994); each captures day, month, year,
// hour, minute and second by name.
const W = "[ \\t\\n\\f\\r]+";
const MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec";
const DAY = "(?<d>\\d\\d)", MONTH = `(?<m>${MONTHS})`, YEAR = "(?<y>\\d{4})";
const TIME = "(?<h>\\d\\d):(?<mi>\\d\\d):(?<s>\\d\\d)";
const SHORT = "(Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const DATE_FORMS = [
  `${SHORT},${W}${DAY}${W}${MONTH}${W}${YEAR}${W}${TIME}${W}GMT`,
  `(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,${W}${DAY}-${MONTH}-(?<yy>\\d\\d)${W}${TIME}${W}GMT`,
  `${SHORT}${W}${MONTH}${W}(?<d>\\d\\d?)${W}${TIME}${W}${YEAR}`,
].map((form) => new RegExp(`^[ \\t\\n\\f\\r]*${form}[ \\t\\n\\f\\r]*$`));

/**
 * An HTTP-date in ms since the epoch (`now` places an RFC 850 two-digit year: of the years
 * ending in those digits, the latest that is at most 50 years after `now`'s), NaN for anything else, a day the month
 * does not have and an hour past 23, a minute past 59 or a second past 60 included. The
 * core's `http_date_ms`, which the browser tests hold it to, gives the same answers.
 */
export function httpDate(value, now) {
  const g = DATE_FORMS.map((form) => form.exec(value)).find(Boolean)?.groups;
  if (!g) return NaN;
  let y = +g.y;
  if (g.yy) {
    const thisYear = new Date(now).getUTCFullYear();
    y = thisYear - (thisYear % 100) + +g.yy;
    if (y > thisYear + 50) y -= 100;
  }
  const t = new Date(0);
  // The full year as given: Date.UTC would read 0 to 99 as 1900 to 1999.
  t.setUTCFullYear(y, MONTHS.indexOf(g.m) / 4, +g.d);
  if (t.getUTCDate() != g.d || g.h > 23 || g.mi > 59 || g.s > 60) return NaN;
  return t.setUTCHours(g.h, g.mi, g.s);
}
