//! Bad input of every kind gets a 4xx, never a 5xx, never a crash.

mod common;

use std::net::SocketAddr;

use common::*;

fn post_bytes(addr: SocketAddr, head_extra: &[u8], body: &[u8]) -> Option<Resp> {
    let mut req = b"POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".to_vec();
    req.extend_from_slice(head_extra);
    req.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    req.extend_from_slice(body);
    raw(addr, &req).expect("io")
}

fn assert_alive(s: &Server) {
    assert_eq!(
        request(s.addr, "GET", "/healthz", &[], b"").status,
        200,
        "server died; log:\n{}",
        s.log_text()
    );
    assert!(
        !s.log_text().contains("panicked"),
        "server log shows a panic:\n{}",
        s.log_text()
    );
}

fn missing_or_malformed_keys_are_400(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let r = request(
        s.addr,
        "POST",
        "/api/charges",
        &[("Content-Type", "application/json")],
        BODY.as_bytes(),
    );
    assert_eq!(r.assert_problem(400)["code"], "missing_idempotency_key");

    let long = "k".repeat(256);
    let cases: Vec<&[u8]> = vec![
        b"Idempotency-Key: \r\n",
        b"Idempotency-Key:    \r\n",
        long.as_bytes(),
        b"Idempotency-Key: a b\r\n",
        b"Idempotency-Key: \"unterminated\r\n",
        b"Idempotency-Key: \"a\"x\r\n",
        b"Idempotency-Key: \"a\\nb\"\r\n",
        b"Idempotency-Key: \"\"\r\n",
        "Idempotency-Key: caf\u{e9}\r\n".as_bytes(),
        b"Idempotency-Key: a\xffb\r\n",
        b"Idempotency-Key: a\x01b\r\n",
        b"Idempotency-Key: one\r\nIdempotency-Key: two\r\n",
    ];
    for case in cases {
        let head = if case == long.as_bytes() {
            format!("Idempotency-Key: {long}\r\n").into_bytes()
        } else {
            case.to_vec()
        };
        let mut head = head;
        head.extend_from_slice(b"Content-Type: application/json\r\n");
        let r = post_bytes(s.addr, &head, BODY.as_bytes()).expect("an answer");
        assert_eq!(
            r.status,
            400,
            "{:?} -> {} {}",
            String::from_utf8_lossy(case),
            r.status,
            r.text()
        );
        // A control character breaks the head: hyper refuses it, with its own
        // empty 400, before any handler.
        if case.contains(&1) {
            assert!(r.body.is_empty(), "{}", r.text());
            continue;
        }
        assert_eq!(
            r.assert_problem(400)["code"],
            "invalid_idempotency_key",
            "{:?}",
            String::from_utf8_lossy(case)
        );
    }
    // The boundary itself is accepted.
    let max = "k".repeat(255);
    assert_eq!(charge(s.addr, &uid("c"), &max, BODY).status, 201);
    assert_alive(&s);
}

fn malformed_http_and_headers_are_4xx(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let cases: Vec<Vec<u8>> = vec![
        b"HELLO\r\n\r\n".to_vec(),
        b"POST /api/charges HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n".to_vec(),
        b"POST /api/charges HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n".to_vec(),
        b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".to_vec(),
        b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello".to_vec(),
        b"POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nIdempotency-Key: k\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec(),
        b"POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Customer-Id: \xc3\xa9\r\nIdempotency-Key: k\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".to_vec(),
        format!("POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Customer-Id: {}\r\nIdempotency-Key: k\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}", "c".repeat(129)).into_bytes(),
    ];
    for case in cases {
        let r = raw(s.addr, &case)
            .expect("io")
            .unwrap_or_else(|| panic!("no answer to {:?}", String::from_utf8_lossy(&case)));
        assert_eq!(r.status, 400, "{:?}", String::from_utf8_lossy(&case));
    }
    for (method, path, allow) in [
        ("PUT", "/api/charges", ["GET", "HEAD", "POST"].as_slice()),
        ("PATCH", "/api/charges", &["GET", "HEAD", "POST"]),
        ("DELETE", "/api/charges", &["GET", "HEAD", "POST"]),
        ("POST", "/healthz", &["GET", "HEAD"]),
    ] {
        let r = request(s.addr, method, path, &[], b"");
        assert_eq!(
            r.assert_problem(405)["code"],
            "method_not_allowed",
            "{method} {path}"
        );
        let mut listed: Vec<&str> = r.header("allow").unwrap_or("").split(',').collect();
        listed.sort_unstable();
        assert_eq!(listed, allow, "{method} {path}: Allow");
    }
    request(s.addr, "GET", "/api/nope", &[], b"").assert_problem(404);
    request(s.addr, "GET", "/nope", &[], b"").assert_problem(404);
    assert_alive(&s);
}

fn wrong_content_type_is_415(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("application/jsonp"),
    ] {
        let mut h = vec![("Idempotency-Key", "k1")];
        if let Some(ct) = ct {
            h.push(("Content-Type", ct));
        }
        let r = request(s.addr, "POST", "/api/charges", &h, BODY.as_bytes());
        assert_eq!(
            r.assert_problem(415)["code"],
            "unsupported_media_type",
            "{ct:?}"
        );
    }
    let ok = request(
        s.addr,
        "POST",
        "/api/charges",
        &[
            ("Idempotency-Key", "k1"),
            ("Content-Type", "application/json; charset=utf-8"),
        ],
        BODY.as_bytes(),
    );
    assert_eq!(ok.status, 201);
    assert_alive(&s);
}

fn bodies_that_are_not_json_or_have_wrong_types_are_400(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("cust");
    let deep = "[".repeat(60_000);
    let cases: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"{".to_vec(),
        b"not json".to_vec(),
        b"{\"amount\":1,\"currency\":\"\xff\xfe\"}".to_vec(),
        b"\xef\xbb\xbf{\"amount\":1,\"currency\":\"usd\"}".to_vec(),
        b"{\"amount\":1,\"currency\":\"usd\"}\x00".to_vec(),
        deep.into_bytes(),
        b"null".to_vec(),
        b"[]".to_vec(),
        b"{}".to_vec(),
        br#"{"amount":"4200","currency":"usd"}"#.to_vec(),
        br#"{"amount":-1,"currency":"usd"}"#.to_vec(),
        br#"{"amount":0,"currency":"usd"}"#.to_vec(),
        br#"{"amount":12.5,"currency":"usd"}"#.to_vec(),
        br#"{"amount":1e400,"currency":"usd"}"#.to_vec(),
        br#"{"amount":18446744073709551616,"currency":"usd"}"#.to_vec(),
        br#"{"amount":100000000,"currency":"usd"}"#.to_vec(),
        br#"{"amount":true,"currency":"usd"}"#.to_vec(),
        br#"{"amount":1,"currency":840}"#.to_vec(),
        br#"{"amount":1,"currency":"xxx"}"#.to_vec(),
        br#"{"amount":1,"currency":"usd","items":"tee"}"#.to_vec(),
        br#"{"amount":1,"currency":"usd","items":[1,2]}"#.to_vec(),
        br#"{"amount":1,"currency":"usd","card":4242424242424242}"#.to_vec(),
        br#"{"amount":1,"currency":"usd","card":"12"}"#.to_vec(),
    ];
    for (i, body) in cases.iter().enumerate() {
        let k = format!("bad-{i}");
        let r = try_request(
            s.addr,
            "POST",
            "/api/charges",
            &[
                ("Content-Type", "application/json"),
                ("X-Customer-Id", &c),
                ("Idempotency-Key", &k),
            ],
            body,
        )
        .expect("io")
        .expect("an answer");
        assert_eq!(r.assert_problem(400)["code"], "invalid_request", "case {i}");
    }
    assert_eq!(ledger(s.addr, &c)["count"], 0);
    // A refused body stores nothing: the key is still free.
    assert_eq!(charge(s.addr, &c, "bad-0", BODY).status, 201);
    assert_alive(&s);
}

fn bodies_over_64_kib_are_413(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("cust");
    // Declared huge: refused from the headers alone.
    let head = format!(
        "POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nIdempotency-Key: big1\r\nX-Customer-Id: {c}\r\nContent-Length: 10000000\r\n\r\n"
    );
    raw(s.addr, head.as_bytes())
        .unwrap()
        .expect("an answer")
        .assert_problem(413);
    // Just over the limit, sent in full.
    let pad = "x".repeat(64 * 1024);
    let body = format!(r#"{{"amount":1,"currency":"usd","pad":"{pad}"}}"#);
    charge(s.addr, &c, "big2", &body).assert_problem(413);
    // Chunked, no Content-Length.
    let mut req = format!(
        "POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nIdempotency-Key: big3\r\nX-Customer-Id: {c}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.as_bytes().chunks(8192) {
        req.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        req.extend_from_slice(chunk);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    raw(s.addr, &req)
        .unwrap()
        .expect("an answer")
        .assert_problem(413);
    // A small chunked body is fine.
    let mut ok = format!(
        "POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nIdempotency-Key: small\r\nX-Customer-Id: {c}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    ok.extend_from_slice(format!("{:x}\r\n{BODY}\r\n0\r\n\r\n", BODY.len()).as_bytes());
    assert_eq!(raw(s.addr, &ok).unwrap().expect("an answer").status, 201);
    // Just under the limit is accepted.
    let fits = format!(
        r#"{{"amount":1,"currency":"usd","pad":"{}"}}"#,
        "x".repeat(64 * 1024 - 60)
    );
    assert!(fits.len() <= 64 * 1024);
    assert_eq!(charge(s.addr, &c, "fits", &fits).status, 201);
    assert_eq!(ledger(s.addr, &c)["count"], 2);
    assert_alive(&s);
}

both_stores!(
    missing_or_malformed_keys_are_400,
    malformed_http_and_headers_are_4xx,
    wrong_content_type_is_415,
    bodies_that_are_not_json_or_have_wrong_types_are_400,
    bodies_over_64_kib_are_413,
);
