//! The security review of `server/README.md`, one test per claim: keys and
//! replays stay within their customer, the demo-only switches are off unless
//! asked for, problem bodies never echo unbounded input, and card numbers
//! never reach the log, not even at trace level.

mod common;

use common::*;

fn a_replay_never_crosses_customers(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let (a, b, c, k) = (uid("a"), uid("b"), uid("c"), uid("shared-key"));
    let first_a = charge(s.addr, &a, &k, BODY);
    let first_b = charge(s.addr, &b, &k, BODY);
    assert_eq!((first_a.status, first_b.status), (201, 201));
    assert!(!first_b.replayed(), "b got a's answer replayed");
    assert_eq!(first_b.json()["customer"], b.as_str());
    assert!(!first_b.text().contains(&a), "b's answer names a");
    // Each customer's replay is its own answer, byte for byte.
    let again_a = charge(s.addr, &a, &k, BODY);
    let again_b = charge(s.addr, &b, &k, BODY);
    assert!(again_a.replayed() && again_b.replayed());
    assert_eq!(again_a.body, first_a.body);
    assert_eq!(again_b.body, first_b.body);
    // Another customer's payload under the same key is not a reuse (no 422 leaking
    // that the key exists elsewhere): it is a new charge.
    let other = BODY.replace("4200", "99");
    let first_c = charge(s.addr, &c, &k, &other);
    assert_eq!(first_c.status, 201, "{}", first_c.text());
    assert_eq!(first_c.json()["amount"], 99);
    for (who, n) in [(&a, 1), (&b, 1), (&c, 1)] {
        assert_eq!(ledger(s.addr, who)["count"], n);
    }
}

fn faults_and_cors_are_off_unless_asked_and_faults_warns(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    for (method, path) in [
        ("POST", "/api/faults"),
        ("GET", "/api/faults"),
        ("POST", "/api/naive/charges"),
        ("GET", "/api/provider"),
    ] {
        let r = request(
            s.addr,
            method,
            path,
            &[("Content-Type", "application/json")],
            b"{}",
        );
        r.assert_problem(404);
    }
    let r = request(s.addr, "DELETE", "/api/charges", &[], b"");
    r.assert_problem(405);
    let pre = request(
        s.addr,
        "OPTIONS",
        "/api/charges",
        &[
            ("Origin", "http://evil.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    assert_eq!(pre.header("access-control-allow-origin"), None);
    assert_eq!(pre.header("access-control-allow-credentials"), None);
    assert!(!s.log_text().contains("--faults"), "{}", s.log_text());

    let f = Server::start_with(b, &["--faults", "--provider-latency-ms", "5"]);
    let log = f.log_text();
    assert!(
        log.contains("WARN")
            && log.contains("--faults is on")
            && log.contains("never use it in production"),
        "--faults must warn at start; log:\n{log}"
    );
}

fn problem_bodies_echo_no_unbounded_input(b: Backend) {
    let s = Server::start_with(b, &["--faults", "--provider-latency-ms", "5"]);
    let long = "z".repeat(6000);
    let c = uid("echo");
    let key_hdr = format!("k{long}");
    let member = format!(r#"{{"amount":1,"currency":"usd","{long}":1,"{long}":2}}"#);
    let currency = format!(r#"{{"amount":1,"currency":"{long}"}}"#);
    let fault = format!(r#"{{"mode":"{long}"}}"#);
    let answers = vec![
        request(s.addr, "GET", &format!("/api/{long}"), &[], b""),
        request(s.addr, "GET", &format!("/{long}"), &[], b""),
        request(s.addr, &format!("X{long}"), "/api/charges", &[], b""),
        request(
            s.addr,
            "POST",
            "/api/charges",
            &[
                ("Content-Type", "application/json"),
                ("Idempotency-Key", &key_hdr),
            ],
            BODY.as_bytes(),
        ),
        request(
            s.addr,
            "POST",
            "/api/charges",
            &[
                ("Content-Type", "application/json"),
                ("X-Customer-Id", &long),
                ("Idempotency-Key", "k"),
            ],
            BODY.as_bytes(),
        ),
        request(
            s.addr,
            "POST",
            "/api/charges",
            &[
                ("Content-Type", &format!("text/{long}")),
                ("Idempotency-Key", "k"),
            ],
            BODY.as_bytes(),
        ),
        charge(s.addr, &c, "dup", &member),
        charge(s.addr, &c, "cur", &currency),
        charge(s.addr, &c, "json", &format!("{{\"{long}")),
        request(
            s.addr,
            "POST",
            "/api/faults",
            &[("Content-Type", "application/json")],
            fault.as_bytes(),
        ),
    ];
    // A detail may quote up to 64 characters of what was sent, never more.
    for r in answers {
        assert!(r.status >= 400, "{} {}", r.status, r.text());
        r.assert_problem(r.status);
        assert!(
            r.body.len() < 1024 && !r.text().contains(&"z".repeat(65)),
            "a {} problem echoes the input ({} bytes): {}",
            r.status,
            r.body.len(),
            &r.text()[..r.text().len().min(300)]
        );
    }
}

fn card_numbers_never_reach_the_log_even_at_trace(b: Backend) {
    let s = Server::start_with(
        b,
        &[
            "--faults",
            "--provider-latency-ms",
            "5",
            "--log-level",
            "trace",
        ],
    );
    let c = uid("pan");
    let cards = [
        "4242424242424242",
        "4000000000000002",
        "5555 5555 5555 4444",
        "3782-822463-10005",
    ];
    for (i, card) in cards.iter().enumerate() {
        let ok = format!(r#"{{"amount":100,"currency":"usd","card":"{card}"}}"#);
        charge(s.addr, &c, &format!("pan-{i}"), &ok);
        charge(s.addr, &c, &format!("pan-{i}"), &ok); // replay
        charge(s.addr, &c, &format!("pan-{i}"), &ok.replace("100", "101")); // 422
        let refused = [
            format!(r#"{{"amount":0,"currency":"usd","card":"{card}"}}"#),
            format!(r#"{{"amount":1,"currency":"usd","card":"{card}","card":"{card}"}}"#),
            format!(r#"{{"amount":1,"currency":"usd","card":"{card}""#),
            format!(r#"{{"amount":1,"currency":"usd","card":"{card}x"}}"#),
            format!(
                r#"{{"amount":1,"currency":"usd","card":"{card}","pad":"{}"}}"#,
                "p".repeat(70 * 1024)
            ),
        ];
        for (j, body) in refused.iter().enumerate() {
            let r = charge(s.addr, &c, &format!("bad-{i}-{j}"), body);
            assert!(r.status >= 400, "{}", r.text());
        }
        let naive = format!(r#"{{"amount":100,"currency":"usd","card":"{card}"}}"#);
        request(
            s.addr,
            "POST",
            "/api/naive/charges",
            &[("Content-Type", "application/json"), ("X-Customer-Id", &c)],
            naive.as_bytes(),
        );
    }
    let log = s.log_text();
    assert!(
        log.contains("TRACE") || log.contains("DEBUG"),
        "the log is not verbose:\n{log}"
    );
    for card in cards {
        let digits: String = card.chars().filter(char::is_ascii_digit).collect();
        for needle in [
            card.to_string(),
            digits.clone(),
            digits[digits.len() - 12..].to_string(),
        ] {
            if let Some(line) = log.lines().find(|l| l.contains(&needle)) {
                panic!("the log carries a card number ({needle}): {line}");
            }
        }
    }
}

both_stores!(
    a_replay_never_crosses_customers,
    faults_and_cors_are_off_unless_asked_and_faults_warns,
    problem_bodies_echo_no_unbounded_input,
    card_numbers_never_reach_the_log_even_at_trace,
);
