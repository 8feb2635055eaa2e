use super::*;

/// Sun, 06 Nov 1994 08:49:37 GMT
const T1994: f64 = 784_111_777_000.0;
/// 2023-11-14T22:13:20Z
const NOW: f64 = 1_700_000_000_000.0;

#[test]
fn delta_seconds() {
    assert_eq!(parse_retry_after("0", NOW), Some(0));
    assert_eq!(parse_retry_after("1", NOW), Some(1000));
    assert_eq!(parse_retry_after("120", NOW), Some(120_000));
    assert_eq!(parse_retry_after(" 5\t", NOW), Some(5000));
    // Surrounding ASCII whitespace of any kind (browsers strip CR and LF already).
    assert_eq!(parse_retry_after("\r\n5\n", NOW), Some(5000));
    assert_eq!(parse_retry_after("007", NOW), Some(7000));
    assert_eq!(
        parse_retry_after("18446744073709551", NOW),
        Some(18_446_744_073_709_551_000)
    );
}

#[test]
fn garbage_negative_and_overflow_are_none() {
    for v in [
        "",
        " ",
        "-1",
        "+1",
        "1.5",
        "1e3",
        "5s",
        "abc",
        "0x10",
        "1 2",
        "18446744073709552",
        "99999999999999999999999",
        "Sun, 06 Nov 1994",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun 06 Nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 29 Feb 2023 00:00:00 GMT",
        "Sunday, 06-Nov-94 08:49:37",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06-Nov-94-1 08:49:37 GMT",
        "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-9 08:49:37 GMT",
        "Sunday, 06/Nov/94 08:49:37 GMT",
        "Sunday, 06-Nov94- 08:49:37 GMT",
        "Sunday, 06-Nôv-94 08:49:37 GMT",
        "Sunday, 06-No-94- 08:49:37 GMT",
        "Sun,\u{a0}06 Nov 1994 08:49:37 GMT",
        "Sun Nov 106 08:49:37 1994",
        "Sun Nov 6 08:49:37 94",
        "Sunday Nov  6 08:49:37 1994",
        "sun, 06 nov 1994 08:49:37 gmt",
    ] {
        assert_eq!(parse_retry_after(v, NOW), None, "{v:?}");
    }
}

#[test]
fn three_date_forms_agree() {
    let before = T1994 - 30_000.0;
    for v in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun Nov 06 08:49:37 1994",
    ] {
        assert_eq!(http_date_ms(v, NOW), Some(T1994), "{v}");
        assert_eq!(parse_retry_after(v, before), Some(30_000), "{v}");
    }
}

#[test]
fn future_dates() {
    // 2023-11-14T22:13:50Z is 30 s after NOW.
    assert_eq!(
        parse_retry_after("Tue, 14 Nov 2023 22:13:50 GMT", NOW),
        Some(30_000)
    );
    assert_eq!(
        parse_retry_after("Tuesday, 14-Nov-23 22:13:50 GMT", NOW),
        Some(30_000)
    );
    assert_eq!(
        parse_retry_after("Tue Nov 14 22:13:50 2023", NOW),
        Some(30_000)
    );
    // A fractional now rounds the wait down.
    assert_eq!(
        parse_retry_after("Tue, 14 Nov 2023 22:13:50 GMT", NOW + 0.5),
        Some(29_999)
    );
}

#[test]
fn past_dates_mean_now() {
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", NOW),
        Some(0)
    );
    assert_eq!(
        parse_retry_after("Tue, 14 Nov 2023 22:13:20 GMT", NOW),
        Some(0)
    );
    assert_eq!(
        parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", NOW),
        Some(0)
    );
    assert_eq!(
        parse_retry_after("Mon, 01 Jan 1900 00:00:00 GMT", NOW),
        Some(0)
    );
}

#[test]
fn calendar_edges() {
    assert_eq!(
        http_date_ms("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        Some(0.0)
    );
    assert_eq!(
        http_date_ms("Thu, 29 Feb 2024 00:00:00 GMT", 0.0),
        Some(1_709_164_800_000.0)
    );
    assert_eq!(
        http_date_ms("Tue, 29 Feb 2000 00:00:00 GMT", 0.0),
        Some(951_782_400_000.0)
    );
    assert_eq!(http_date_ms("Thu, 29 Feb 1900 00:00:00 GMT", 0.0), None);
    assert_eq!(
        http_date_ms("Fri, 31 Dec 9999 23:59:59 GMT", 0.0),
        Some(253_402_300_799_000.0)
    );
    // A leap second parses (it lands on the next second).
    assert_eq!(
        http_date_ms("Sat, 31 Dec 2016 23:59:60 GMT", 0.0),
        Some(1_483_228_800_000.0)
    );
}

#[test]
fn rfc850_two_digit_years_follow_rfc9110() {
    // Now is 2023: "73" is 2073 (50 years ahead, kept); "74" would be 2074, more than 50 ahead -> 1974.
    let y2073 = http_date_ms("Sunday, 01-Jan-73 00:00:00 GMT", NOW).unwrap();
    assert_eq!(y2073, 3_250_454_400_000.0);
    let y1974 = http_date_ms("Tuesday, 01-Jan-74 00:00:00 GMT", NOW).unwrap();
    assert_eq!(y1974, 126_230_400_000.0);
    let y2000 = http_date_ms("Saturday, 01-Jan-00 00:00:00 GMT", NOW).unwrap();
    assert_eq!(y2000, 946_684_800_000.0);
}

#[test]
fn only_a_value_shaped_like_a_date_goes_to_the_hosts_reader() {
    // A reader as lenient as `Date.parse`, which takes "1.5" or "-1" for dates.
    let lenient = |_: &str| Some(0.0);
    for v in ["-1", "+1", "1.5", "1e3", "5s", "0x10", "1 2", "", " "] {
        assert_eq!(retry_after_ms(v, NOW, lenient), None, "{v:?}");
    }
    for v in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
        let mut read = None;
        let wait = retry_after_ms(v, NOW, |d| {
            read = Some(d.to_string());
            Some(NOW + 1500.0)
        });
        assert_eq!((wait, read.as_deref()), (Some(1500), Some(v)));
    }
    // Its answer decides: a time past is "now", none is the caller's backoff.
    assert_eq!(
        retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", NOW, |_| Some(T1994)),
        Some(0)
    );
    assert_eq!(
        retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", NOW, |_| None),
        None
    );
    // Seconds never go to it.
    assert_eq!(retry_after_ms("7", NOW, |_| unreachable!()), Some(7000));
}
