//! `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date in any of its three forms.
//! The core is the only reader of both, in the wasm and on the host.

use crate::core::ascii::digits as number;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// How long the server asks us to wait, in ms, from a `Retry-After` value at `now_ms`.
///
/// A date in the past means "now" (`Some(0)`); anything unparseable, negative or
/// overflowing is `None`, and the caller falls back to its own backoff.
pub fn parse_retry_after(value: &str, now_ms: f64) -> Option<u64> {
    let v = value.trim_ascii();
    if v.bytes().all(|b| b.is_ascii_digit()) {
        // `number` refuses "" and a count of seconds that overflows.
        return number(v)?.checked_mul(1000);
    }
    let at = http_date_ms(v, now_ms)?;
    let wait = at - now_ms;
    Some(if wait > 0.0 { wait as u64 } else { 0 })
}

/// Parses an HTTP-date (IMF-fixdate, RFC 850 or asctime) to ms since the epoch.
pub fn http_date_ms(v: &str, now_ms: f64) -> Option<f64> {
    // The words between runs of ASCII whitespace; a form has at most six.
    let mut t = [""; 6];
    let mut n = 0;
    for word in v.split_ascii_whitespace() {
        *t.get_mut(n)? = word;
        n += 1;
    }
    let (day, month, year, time) = match t.get(..n)? {
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        [wd, d, m, y, time, "GMT"] => {
            day_name(wd.strip_suffix(',')?, &DAYS)?;
            (two(d)?, month(m)?, four(y)?, *time)
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        [wd, date, time, "GMT"] => {
            day_name(wd.strip_suffix(',')?, &LONG_DAYS)?;
            // dd-Mmm-yy, the only form its parts can take.
            if date.len() != 9 || date.as_bytes()[2] != b'-' || date.as_bytes()[6] != b'-' {
                return None;
            }
            let (d, m, y) = (date.get(0..2)?, date.get(3..6)?, date.get(7..9)?);
            (two(d)?, month(m)?, rfc850_year(two(y)?, now_ms), *time)
        }
        // asctime: Sun Nov  6 08:49:37 1994
        [wd, m, d, time, y] => {
            day_name(wd, &DAYS)?;
            if d.is_empty() || d.len() > 2 {
                return None;
            }
            (digits(d)?, month(m)?, four(y)?, *time)
        }
        _ => return None,
    };
    let (h, mi, s) = clock(time)?;
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + (h * 3600 + mi * 60 + s) as i64;
    Some(secs as f64 * 1000.0)
}

fn day_name(s: &str, names: &[&str; 7]) -> Option<()> {
    names.contains(&s).then_some(())
}

fn month(s: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == s).map(|i| i as u32 + 1)
}

fn digits(s: &str) -> Option<u32> {
    number(s)?.try_into().ok()
}

fn two(s: &str) -> Option<u32> {
    if s.len() == 2 {
        digits(s)
    } else {
        None
    }
}

fn four(s: &str) -> Option<i64> {
    if s.len() == 4 {
        digits(s).map(|y| y as i64)
    } else {
        None
    }
}

fn clock(s: &str) -> Option<(u32, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, m, sec) = (two(s.get(0..2)?)?, two(s.get(3..5)?)?, two(s.get(6..8)?)?);
    // 60 is a leap second, which the grammar allows.
    if h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some((h, m, sec))
}

/// RFC 9110: a two-digit year more than 50 years ahead is in the previous century.
fn rfc850_year(yy: u32, now_ms: f64) -> i64 {
    // Whole days since the epoch, rounded down (`f64::floor` is std-only; `as` truncates).
    let days = now_ms / 86_400_000.0;
    let day = days as i64 - ((days as i64) as f64 > days) as i64;
    let now_year = civil_year(day);
    let mut y = now_year - now_year.rem_euclid(100) + yy as i64;
    if y > now_year + 50 {
        y -= 100;
    }
    y
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The year of a day count since 1970-01-01 (inverse of [`days_from_civil`], year only).
fn civil_year(days: i64) -> i64 {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + if m <= 2 { 1 } else { 0 }
}

#[cfg(test)]
#[path = "retry_after_tests.rs"]
mod tests;
