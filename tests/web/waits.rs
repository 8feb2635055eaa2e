//! Browser tests of how long a submit waits: Retry-After in seconds and as an HTTP date,
//! the backoff with full jitter between tries, and `deadlineMs`, which bounds the whole
//! submit and ends it at once when a wait would pass it. All against the real reference
//! server, whose fault log (`GET /api/faults`) counts the requests and compares their keys
//! and bodies, as in retry.rs.

use crate::support::*;
use js_sys::Array;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

// P-deadline: deadlineMs cuts a slow try: outcome-unknown within the budget
#[wasm_bindgen_test]
async fn the_deadline_bounds_the_whole_submit() {
    let (c, customer, ev) = checkout(r#"{"deadlineMs":400,"timeoutMs":10000,"maxRetries":50}"#);
    fault(&customer, "delay-after-commit", 1, 2000).await;
    let t0 = js_sys::Date::now();
    let e = submit(&c, &js(PAY)).await.unwrap_err();
    let took = js_sys::Date::now() - t0;
    assert_idem_error(&e, "outcome-unknown", "timeout");
    assert!(took < 1500.0, "gave up after {took} ms");
    assert!(events_of(&ev, "retry").is_empty());
    assert_eq!(c.state(), "pending");
    c.finish();
}

// P-retry-after: Retry-After in seconds or as a date sets the wait, not the backoff
// P-event-retry: the retry event's delayMs is the wait
#[wasm_bindgen_test]
async fn retry_after_as_an_http_date_and_in_seconds_is_honoured() {
    // A backoff of up to 5 s: a delay that follows Retry-After instead is unmistakable.
    let (c, customer, ev) = checkout(r#"{"backoff":{"baseMs":5000,"maxMs":5000}}"#);
    // An IMF-fixdate 1.2 to 2.2 s ahead (whole seconds).
    let target = ((js_sys::Date::now() + 1200.0) / 1000.0).ceil() * 1000.0;
    let date: String = js_sys::Date::new(&JsValue::from_f64(target))
        .to_utc_string()
        .into();
    assert!(date.ends_with(" GMT"), "{date}");
    schedule(
        &customer,
        &format!(r#"{{"mode":"respond","status":503,"retry_after":"{date}"}}"#),
    )
    .await;
    schedule(
        &customer,
        r#"{"mode":"respond","status":429,"retry_after":"1"}"#,
    )
    .await;
    schedule(
        &customer,
        r#"{"mode":"respond","status":503,"retry_after":"0"}"#,
    )
    .await;
    schedule(&customer, MARKER).await;
    let t0 = js_sys::Date::now();
    let r = submit(&c, &js(PAY)).await.unwrap();
    let took = js_sys::Date::now() - t0;
    assert_eq!(num(&r, "status"), 201.0);
    assert_eq!(num(&r, "attempts"), 4.0);
    let retries = timed_events_of(&ev, "retry");
    assert_eq!(retries.len(), 3);
    let delays: Vec<f64> = retries.iter().map(|(e, _)| num(e, "delayMs")).collect();
    // The date: the time left until it when the answer came (the event is emitted just
    // after the client read its clock, so a few ms of slack).
    let (_, at) = retries[0];
    let left = target - at;
    assert!(
        (left - 5.0..=left + 100.0).contains(&delays[0]),
        "Retry-After {date}: delay {} ms, {left} ms were left",
        delays[0]
    );
    assert_eq!(
        &delays[1..],
        [1000.0, 0.0],
        "Retry-After 1 and 0, not the 5 s backoff"
    );
    assert!(
        took >= delays.iter().sum::<f64>(),
        "took {took} ms for {delays:?}"
    );
    assert!(took < delays.iter().sum::<f64>() + 2000.0, "took {took} ms");
    assert_eq!(reasons(&ev), ["status-503", "status-429", "status-503"]);
    assert_requests(
        &customer,
        &c.key(),
        &["respond", "respond", "respond", "delay-after-commit"],
    )
    .await;
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

/// A time `ahead_ms` from now in whole seconds, and the date `form` writes for it.
fn obsolete_date(ahead_ms: f64, form: &str) -> (f64, String) {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const LONG_DAYS: [&str; 7] = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let target = ((js_sys::Date::now() + ahead_ms) / 1000.0).ceil() * 1000.0;
    let d = js_sys::Date::new(&JsValue::from_f64(target));
    let (wd, day, month) = (
        d.get_utc_day() as usize,
        d.get_utc_date(),
        MONTHS[d.get_utc_month() as usize],
    );
    let (year, time) = (
        d.get_utc_full_year(),
        format!(
            "{:02}:{:02}:{:02}",
            d.get_utc_hours(),
            d.get_utc_minutes(),
            d.get_utc_seconds()
        ),
    );
    let text = match form {
        // Sunday, 06-Nov-94 08:49:37 GMT
        "rfc850" => format!(
            "{}, {day:02}-{month}-{:02} {time} GMT",
            LONG_DAYS[wd],
            year % 100
        ),
        // Sun Nov  6 08:49:37 1994
        _ => format!("{} {month} {day:>2} {time} {year}", DAYS[wd]),
    };
    (target, text)
}

// P-retry-after: the two obsolete HTTP-date forms (RFC 850 and asctime) set the wait too
#[wasm_bindgen_test]
async fn retry_after_in_the_obsolete_date_forms_is_honoured() {
    let (c, customer, ev) = checkout(r#"{"backoff":{"baseMs":5000,"maxMs":5000}}"#);
    let (rfc850_at, rfc850) = obsolete_date(1200.0, "rfc850");
    let (asctime_at, asctime) = obsolete_date(2400.0, "asctime");
    for date in [&rfc850, &asctime] {
        schedule(
            &customer,
            &format!(r#"{{"mode":"respond","status":503,"retry_after":"{date}"}}"#),
        )
        .await;
    }
    schedule(&customer, MARKER).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!((num(&r, "status"), num(&r, "attempts")), (201.0, 3.0));
    let retries = timed_events_of(&ev, "retry");
    assert_eq!(retries.len(), 2);
    for ((e, at), (target, date)) in retries
        .iter()
        .zip([(rfc850_at, &rfc850), (asctime_at, &asctime)])
    {
        let (delay, left) = (num(e, "delayMs"), target - at);
        assert!(
            (left - 5.0..=left + 100.0).contains(&delay),
            "Retry-After {date}: delay {delay} ms, {left} ms were left"
        );
    }
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

// P-backoff: each wait is random, up to min(maxMs, baseMs * 2^n), and is waited out before the next try
#[wasm_bindgen_test]
async fn the_backoff_grows_exponentially_up_to_max_ms_with_full_jitter() {
    let (c, customer, ev) = checkout(r#"{"maxRetries":6,"backoff":{"baseMs":100,"maxMs":400}}"#);
    // 503s without Retry-After: the backoff alone sets each wait.
    schedule(&customer, r#"{"mode":"respond","count":6,"status":503}"#).await;
    schedule(&customer, MARKER).await;
    let r = submit(&c, &js(PAY)).await.unwrap();
    assert_eq!((num(&r, "status"), num(&r, "attempts")), (201.0, 7.0));
    let retries = timed_events_of(&ev, "retry");
    let tries = timed_events_of(&ev, "attempt");
    assert_eq!((retries.len(), tries.len()), (6, 7));
    let caps = [100.0, 200.0, 400.0, 400.0, 400.0, 400.0];
    let delays: Vec<f64> = retries.iter().map(|(e, _)| num(e, "delayMs")).collect();
    for (n, (delay, cap)) in delays.iter().zip(caps).enumerate() {
        assert!(
            (0.0..=cap).contains(delay),
            "wait {n}: {delay} ms, above min(maxMs, baseMs * 2^{n}) = {cap}: {delays:?}"
        );
        // The next try goes out once the wait is over (timers may round down by 1 ms).
        let (waited_from, next_try) = (retries[n].1, tries[n + 1].1);
        assert!(
            next_try - waited_from >= delay - 2.0,
            "try {} after {} ms, before its {delay} ms wait was over",
            n + 2,
            next_try - waited_from
        );
    }
    // Full jitter: random waits, not the caps (all six at 95 % of their cap or more has
    // a chance of 1 in 64 million).
    assert!(
        delays.iter().zip(caps).any(|(d, cap)| *d < cap * 0.95),
        "every wait at its cap: {delays:?}"
    );
    assert_eq!(ledger(&customer).await, vec![c.key()]);
    c.finish();
}

// P-deadline: a wait (Retry-After or backoff) that would pass deadlineMs ends the submit at once with outcome-unknown
#[wasm_bindgen_test]
async fn a_wait_past_the_deadline_ends_the_submit_at_once() {
    let (c, customer, ev) = checkout(r#"{"deadlineMs":3000}"#);
    let key = c.key();
    schedule(
        &customer,
        r#"{"mode":"respond","count":2,"status":503,"retry_after":"10"}"#,
    )
    .await;
    let t0 = js_sys::Date::now();
    let e = submit(&c, &js(PAY)).await.unwrap_err();
    let took = js_sys::Date::now() - t0;
    assert_idem_error(&e, "outcome-unknown", "");
    assert!(
        took < 2000.0,
        "waited {took} ms for a wait past the deadline"
    );
    assert_eq!(events_of(&ev, "attempt").len(), 1, "one try");
    let f = faults(&customer).await;
    assert_eq!(
        num(&Array::from(&get(&f, "scheduled")).get(0), "remaining"),
        1.0,
        "one request reached the server"
    );
    assert_eq!((c.state(), c.key()), ("pending".to_string(), key));
    c.finish();
}
