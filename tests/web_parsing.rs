//! What the module leaves to the browser against the core's reference: the wasm parses
//! stored records with `JSON.parse`, writes the payload's canonical form for its fingerprint
//! and reads `Retry-After` dates in JS (glue.js, parse.js), where the core (the host, these tests) does all
//! three in Rust. Both must agree: a record idemkey could have written, or any field of one
//! edited, one reads as the other does, with the same reasons;
//! a payload one fingerprints, the other fingerprints alike (or an upgrade would turn a
//! pending key into a conflict); a date one reads, the other reads as the same instant.
#![cfg(target_arch = "wasm32")]

mod support;

use idemkey::core::fingerprint::fingerprint;
use idemkey::core::record::Record;
use idemkey::core::retry_after::http_date_ms;
use js_sys::JSON;
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen(module = "/src/browser/parse.js")]
extern "C" {
    /// parse.js's reading of an HTTP-date: ms since the epoch, NaN for anything else.
    #[wasm_bindgen(js_name = httpDate)]
    fn glue_http_date(value: &str, now_ms: f64) -> f64;
}

wasm_bindgen_test_configure!(run_in_browser);

/// A stored record with one field replaced by `value` (JSON text), or removed (`None`).
fn edited(field: &str, value: Option<&str>) -> String {
    let mut r = Record::new(new_key(), "edited", js_sys::Date::now(), 60_000.0);
    r.state = idemkey::core::state::State::Succeeded;
    r.fingerprint = Some("f1:0123456789abcdef".into());
    r.attempts = 1;
    r.response = Some(idemkey::core::record::StoredResponse {
        status: 201,
        body: "{\"id\":\"ch_1\"}".into(),
        replayed: false,
    });
    let o = js(&r.encode());
    match value {
        Some(v) => set(&o, field, &js(v)),
        None => {
            js_sys::Reflect::delete_property(&o.clone().into(), &field.into()).unwrap();
        }
    }
    JSON::stringify(&o).unwrap().as_string().unwrap()
}

#[wasm_bindgen_test]
fn the_browser_reads_a_record_as_the_core_does() {
    let cases = [
        edited("v", None),
        edited("v", Some("2")),
        edited("v", Some("\"1\"")),
        edited("rev", Some("-1")),
        edited("rev", Some("9007199254740992")),
        edited("key", Some("\"not-a-uuid\"")),
        edited("scope", Some("\"\"")),
        edited("fp", Some("null")),
        edited("fp", Some("[]")),
        edited("state", Some("\"lost\"")),
        edited("attempts", Some("1.5")),
        edited("attempts", Some("4294967296")),
        edited("createdAt", Some("{}")),
        edited("expiresAt", Some("0")),
        edited("response", Some("[]")),
        edited(
            "response",
            Some(r#"{"status":99,"body":"","replayed":false}"#),
        ),
        edited(
            "response",
            Some(r#"{"status":200,"body":[],"replayed":false}"#),
        ),
        edited("response", Some(r#"{"status":200,"body":""}"#)),
        "[1,2]".into(),
        "\"text\"".into(),
    ];
    for (i, text) in cases.iter().enumerate() {
        let scope = uniq("read");
        let want = Record::decode(text).unwrap_err().message();
        local()
            .set_item(&record_key("idemkey", &scope), text)
            .unwrap();
        let (o, ev) = recorded_opts(&scope, "nobody", "{}");
        let c = open(&o);
        let bad = events_of(&ev, "storage-corrupt");
        assert_eq!(bad.len(), 1, "case {i}: {text}");
        assert_eq!(text_of(&bad[0], "reason"), want, "case {i}: {text}");
        local()
            .remove_item(&text_of(&bad[0], "quarantineKey"))
            .unwrap();
        c.finish();
    }
}

/// A page that adds a record's field names to `Object.prototype` gives no record those
/// fields: a record without `key` still lacks it.
#[wasm_bindgen_test]
fn the_browser_reads_only_a_records_own_fields() {
    let proto: js_sys::Object =
        js_sys::Reflect::get(&js_sys::Object::new().constructor(), &"prototype".into())
            .unwrap()
            .into();
    set(&proto.clone().into(), "key", &new_key().into());
    let scope = uniq("proto");
    local()
        .set_item(&record_key("idemkey", &scope), &edited("key", None))
        .unwrap();
    let (o, ev) = recorded_opts(&scope, "nobody", "{}");
    let c = open(&o);
    js_sys::Reflect::delete_property(&proto, &"key".into()).unwrap();
    let bad = events_of(&ev, "storage-corrupt");
    assert_eq!(bad.len(), 1);
    assert_eq!(
        text_of(&bad[0], "reason"),
        "stored record unreadable: missing field `key`"
    );
    local()
        .remove_item(&text_of(&bad[0], "quarantineKey"))
        .unwrap();
    c.finish();
}

/// `name` of `v`, a string.
fn text_of(v: &wasm_bindgen::JsValue, name: &str) -> String {
    get(v, name).as_string().unwrap()
}

#[wasm_bindgen_test]
async fn the_browser_fingerprints_a_payload_as_the_core_does() {
    let deepest = format!("{}{}", "[".repeat(64), "]".repeat(64));
    let payloads = [
        r#"{"b":1,"a":[true,false,null],"c":{"z":"\u0000\u001f\"\\\n\t","y":1e21}}"#,
        // UTF-16 order, not code point order: U+1F600 sorts before U+E000.
        r#"{"\ue000":1,"\ud83d\ude00":2,"a":3,"\u00e9":4,"":5}"#,
        // Integer-like keys, which a JS object lists first and in numeric order.
        r#"{"10":1,"9":2,"a":{"2":[],"10":{}},"-1":3}"#,
        r#"[0.1,-0,1e-7,123456789012345680000,-1.5e300,"\u2028","\ud83d\ude00"]"#,
        r#""just a string""#,
        deepest.as_str(),
    ];
    for p in payloads {
        let v = js(p);
        let text = JSON::stringify(&v).unwrap().as_string().unwrap();
        let (c, _, _) = checkout(r#"{"maxRetries":0}"#);
        // The reference server refuses these bodies (400): the attempt fails, and the
        // record keeps the fingerprint it was sent with.
        let _ = submit(&c, &v).await;
        let stored = local()
            .get_item(&record_key("idemkey", &c.scope()))
            .unwrap()
            .unwrap();
        let rec = Record::decode(&stored).unwrap();
        assert_eq!(rec.fingerprint, Some(fingerprint(&text).unwrap()), "{p}");
        c.finish();
    }
    // What the core's parser refuses, the browser refuses too, with the same words.
    let too_deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
    for (p, why) in [
        (too_deep.as_str(), "nesting deeper than 64 levels"),
        (r#"{"name":"\ud800"}"#, "lone surrogate in \\u escape"),
        (r#"{"\udc00":1}"#, "lone surrogate in \\u escape"),
    ] {
        let text = JSON::stringify(&js(p)).unwrap().as_string().unwrap();
        assert!(fingerprint(&text).is_err(), "{p}");
        let (c, _, _) = checkout("{}");
        let e = submit(&c, &js(p)).await.unwrap_err();
        assert_idem_error(&e, "invalid-payload", why);
        assert_eq!(
            text_of(&e, "message"),
            format!("payload is not JSON-serialisable: {why}")
        );
        assert_eq!(c.state(), "fresh");
        c.finish();
    }
}

/// Every text the core's tests read, and many made from their parts with one part bent
/// (a day or an hour out of range, another month, a missing comma, other whitespace),
/// each at moments that put RFC 850's two-digit years on either side of a century.
#[wasm_bindgen_test]
fn the_browser_reads_an_http_date_as_the_core_does() {
    let mut texts: Vec<String> = [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun Nov 06 08:49:37 1994",
        " \tSun, 06 Nov 1994 08:49:37 GMT\r\n",
        "Sun,  06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994",
        "Sun,\u{a0}06 Nov 1994 08:49:37 GMT",
        "Sun,\u{b}06 Nov 1994 08:49:37 GMT",
        "sun, 06 nov 1994 08:49:37 gmt",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sunday, 06/Nov/94 08:49:37 GMT",
        "Sunday, 06-Nôv-94 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday Nov  6 08:49:37 1994",
        "Sun Nov 106 08:49:37 1994",
        "Sun Nov 6 08:49:37 94",
        "Thu, 29 Feb 1900 00:00:00 GMT",
        "Thu, 29 Feb 2024 00:00:00 GMT",
        "Tue, 29 Feb 2000 00:00:00 GMT",
        "Sat, 31 Dec 2016 23:59:60 GMT",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Mon, 01 Jan 0000 00:00:00 GMT",
        "Mon, 01 Jan 0050 00:00:00 GMT",
        "Mon, 00 Jan 2000 00:00:00 GMT",
        "",
        "5",
        "GMT",
    ]
    .map(String::from)
    .to_vec();
    let mut seed = 0x2545_f491_u32;
    let mut pick = |n: u32| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed % n
    };
    const DAYS: [&str; 8] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Xyz"];
    const LONG: [&str; 8] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Sundays",
    ];
    const MONTHS: [&str; 13] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Foo",
    ];
    const GAPS: [&str; 6] = [" ", "  ", "\t", " \n ", "\u{b}", ""];
    for _ in 0..600 {
        let (day, month) = (pick(33), MONTHS[pick(13) as usize]);
        let (h, mi, s) = (pick(26), pick(62), pick(62));
        let year = [pick(10_000), 1900 + pick(250)][pick(2) as usize];
        let gap = if pick(8) == 0 {
            GAPS[pick(6) as usize]
        } else {
            " "
        };
        let time = format!("{h:02}:{mi:02}:{s:02}");
        texts.push(match pick(3) {
            0 => format!(
                "{},{gap}{day:02} {month} {year:04} {time} GMT",
                DAYS[pick(8) as usize]
            ),
            1 => format!(
                "{},{gap}{day:02}-{month}-{:02} {time} GMT",
                LONG[pick(8) as usize],
                year % 100
            ),
            _ => format!(
                "{}{gap}{month} {day:>2} {time} {year:04}",
                DAYS[pick(8) as usize]
            ),
        });
    }
    // 2023, 2049, 2050 and 2051: "99" is 1999 or 2099, "00" 2000 or 2100 depending on them.
    for now in [
        1_700_000_000_000.0,
        2_500_000_000_000.0,
        2_524_608_000_000.0,
        2_556_144_000_000.0,
    ] {
        for t in &texts {
            let glue = Some(glue_http_date(t, now)).filter(|t| !t.is_nan());
            assert_eq!(glue, http_date_ms(t, now), "{t:?} at {now}");
        }
    }
}
