//! `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date in any of its three forms.
//! The core reads delta-seconds and decides what either form means for the wait. An
//! HTTP-date's time is the host's to read ([`Host::http_date_ms`](crate::core::machine::Host)):
//! the browser reads it with its own `Date.parse`, which costs the module no bytes (this
//! reader cost the module 0.97 KiB, gzipped); the simulator and the host tests use
//! [`http_date_ms`] below, the grammar's strict reader.

use crate::core::ascii::digits as number;

/// The month names, three bytes each, in order.
const MONTHS: &[u8; 36] = b"JanFebMarAprMayJunJulAugSepOctNovDec";
/// The day names as IMF-fixdate and asctime write them.
const DAYS: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
/// The day names as RFC 850 writes them.
const LONG_DAYS: [&[u8]; 7] = [
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
    b"Sunday",
];

/// How long the server asks us to wait, in ms, from a `Retry-After` value at `now_ms`.
///
/// A date in the past means "now" (`Some(0)`); anything unparseable, negative or
/// overflowing is `None`, and the caller falls back to its own backoff.
pub fn parse_retry_after(value: &str, now_ms: f64) -> Option<u64> {
    retry_after_ms(value, now_ms, |date| http_date_ms(date, now_ms))
}

/// [`parse_retry_after`] with an HTTP-date's time (ms since the epoch) read by `date_ms`.
///
/// Only a value shaped like an HTTP-date gets to `date_ms`: it starts with a day name's
/// letter and has a clock's `:` (a lenient reader such as `Date.parse` takes "1.5" or
/// "-1" for dates).
pub fn retry_after_ms(
    value: &str,
    now_ms: f64,
    date_ms: impl FnOnce(&str) -> Option<f64>,
) -> Option<u64> {
    let v = value.trim_ascii();
    let b = v.as_bytes();
    if b.iter().all(|b| b.is_ascii_digit()) {
        // `number` refuses "" and a count of seconds that overflows.
        return number(v)?.checked_mul(1000);
    }
    if !b[0].is_ascii_alphabetic() || !b.contains(&b':') {
        return None;
    }
    let wait = date_ms(v)? - now_ms;
    Some(if wait > 0.0 { wait as u64 } else { 0 })
}

/// Parses an HTTP-date (IMF-fixdate, RFC 850 or asctime) to ms since the epoch.
///
/// Read as bytes, word by word: `str`'s whitespace splitter, slice patterns of `&str` and
/// tables of `&str` weighed about 1 KiB more of gzipped wasm than these loops.
pub fn http_date_ms(v: &str, now_ms: f64) -> Option<f64> {
    // The words between runs of ASCII whitespace; a form has at most six.
    let b = v.as_bytes();
    let mut t: [&[u8]; 6] = [&[]; 6];
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > start {
            *t.get_mut(n)? = &b[start..i];
            n += 1;
        }
        i += 1;
    }
    let (day, month, year, time) = match n {
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        6 if t[5] == b"GMT" => {
            day_name(comma(t[0])?, &DAYS)?;
            (
                num(t[1], 2, 2)?,
                month(t[2])?,
                num(t[3], 4, 4)? as i64,
                t[4],
            )
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        4 if t[3] == b"GMT" => {
            day_name(comma(t[0])?, &LONG_DAYS)?;
            // dd-Mmm-yy, the only form its parts can take.
            let date = t[1];
            if date.len() != 9 || date[2] != b'-' || date[6] != b'-' {
                return None;
            }
            let year = rfc850_year(num(&date[7..], 2, 2)?, now_ms);
            (num(&date[..2], 2, 2)?, month(&date[3..6])?, year, t[2])
        }
        // asctime: Sun Nov  6 08:49:37 1994
        5 => {
            day_name(t[0], &DAYS)?;
            (
                num(t[2], 1, 2)?,
                month(t[1])?,
                num(t[4], 4, 4)? as i64,
                t[3],
            )
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

/// `s` without the comma it must end with.
fn comma(s: &[u8]) -> Option<&[u8]> {
    match s.split_last()? {
        (b',', head) => Some(head),
        _ => None,
    }
}

fn day_name(s: &[u8], names: &[&[u8]; 7]) -> Option<()> {
    names.contains(&s).then_some(())
}

/// The month's number, 1 to 12.
fn month(s: &[u8]) -> Option<u32> {
    (0..12)
        .find(|&i| MONTHS.get(i * 3..i * 3 + 3) == Some(s))
        .map(|i| i as u32 + 1)
}

/// The value of `s` when it is `min` to `max` ASCII digits.
fn num(s: &[u8], min: usize, max: usize) -> Option<u32> {
    if s.len() < min || s.len() > max {
        return None;
    }
    s.iter().try_fold(0, |n, &c| {
        let d = c.wrapping_sub(b'0');
        (d <= 9).then(|| n * 10 + d as u32)
    })
}

/// `hh:mm:ss`.
fn clock(s: &[u8]) -> Option<(u32, u32, u32)> {
    if s.len() != 8 || s[2] != b':' || s[5] != b':' {
        return None;
    }
    let (h, m, sec) = (
        num(&s[..2], 2, 2)?,
        num(&s[3..5], 2, 2)?,
        num(&s[6..], 2, 2)?,
    );
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
