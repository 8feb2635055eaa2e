//! `Retry-After` parsing: delta-seconds and the three HTTP-date forms.
//!
//! Properties: surrounding spaces and tabs change nothing; delta-seconds are exact or
//! refused on overflow; a date that parses re-formats as an IMF-fixdate that parses to the
//! same instant, and the wait is that instant minus now, never negative.

use crate::clock_and_rest;
use idemkey::core::retry_after::{http_date_ms, parse_retry_after};

/// Parses the text after the first 8 bytes of `data` (the clock, ms) as a `Retry-After`.
pub fn check(data: &[u8]) {
    let (now, rest) = clock_and_rest(data, 1_700_000_000_000.0);
    let Ok(v) = std::str::from_utf8(rest) else {
        return;
    };
    let got = parse_retry_after(v, now);
    let padded = format!(" \t{v}\t ");
    assert_eq!(
        parse_retry_after(&padded, now),
        got,
        "padding changed {v:?}"
    );
    let t = v.trim_matches([' ', '\t']);
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let secs: Option<u64> = t.parse().ok();
        assert_eq!(got, secs.and_then(|s| s.checked_mul(1000)), "{v:?}");
        return;
    }
    match http_date_ms(t, now) {
        None => assert_eq!(got, None, "{v:?} is neither seconds nor a date"),
        Some(at) => {
            assert_eq!(at % 1000.0, 0.0, "{v:?} is whole seconds");
            assert_eq!(
                got,
                Some(if at > now { (at - now) as u64 } else { 0 }),
                "{v:?}"
            );
            if let Some(imf) = imf_fixdate(at) {
                assert_eq!(http_date_ms(&imf, now), Some(at), "{v:?} -> {imf:?}");
            }
        }
    }
}

/// `at` (ms since the epoch) as an IMF-fixdate, or `None` outside years 0000..=9999.
pub fn imf_fixdate(at: f64) -> Option<String> {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = (at / 1000.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return None;
    }
    // 1970-01-01 was a Thursday.
    let wd = DAYS[(days + 3).rem_euclid(7) as usize];
    Some(format!(
        "{wd}, {d:02} {} {y:04} {:02}:{:02}:{:02} GMT",
        MONTHS[m as usize - 1],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ))
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}
