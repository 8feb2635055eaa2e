//! The HTTP layer under hostile clients: half-closed sockets get their answer,
//! stalled bodies time out, every refusal (the parser's own too) is
//! problem+json, and ambiguous requests are refused with a reason.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use common::*;

/// Writes `bytes`, shuts the write side, and reads the answer to the end.
fn half_closed(addr: std::net::SocketAddr, bytes: &[u8]) -> Option<Resp> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(bytes).expect("write");
    s.shutdown(Shutdown::Write).expect("shutdown");
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    (!buf.is_empty()).then(|| parse_response(&buf))
}

fn a_half_closed_request_gets_its_answer(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("half");
    let mut unanswered = 0;
    for i in 0..40 {
        let r = half_closed(s.addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        if r.map(|r| r.status) != Some(200) {
            unanswered += 1;
        }
        let body = BODY.as_bytes();
        let mut req = format!(
            "POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Customer-Id: {c}\r\nIdempotency-Key: half-{i}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body);
        if half_closed(s.addr, &req).map(|r| r.status) != Some(201) {
            unanswered += 1;
        }
    }
    assert_eq!(
        unanswered, 0,
        "{unanswered} of 80 half-closed requests got no answer"
    );
    assert_eq!(ledger(s.addr, &c)["count"], 40);
}

fn a_stalled_body_times_out_with_408(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let mut sock = TcpStream::connect(s.addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let t0 = Instant::now();
    sock.write_all(b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: stall\r\nContent-Length: 1000\r\n\r\n{\"amount\":")
        .unwrap();
    let mut buf = Vec::new();
    let _ = sock.read_to_end(&mut buf);
    let waited = t0.elapsed();
    assert!(
        waited < Duration::from_secs(20),
        "a body that stalled after 10 of 1000 bytes was kept for {waited:?}"
    );
    let r = parse_response(&buf);
    assert_eq!(r.assert_problem(408)["code"], "request_timeout");
    // The key stayed free.
    assert_eq!(charge(s.addr, "anonymous", "stall", BODY).status, 201);
}

fn refusals_by_the_http_layer_are_problems(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let many: String = (0..101).map(|i| format!("X-H{i}: 1\r\n")).collect();
    let long_uri = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70 * 1024));
    let cases: Vec<(u16, Vec<u8>)> = vec![
        (400, b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".to_vec()),
        (400, b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x".to_vec()),
        (400, b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}".to_vec()),
        (400, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n".to_vec()),
        (400, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n".to_vec()),
        (431, format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{many}\r\n").into_bytes()),
        (414, long_uri.into_bytes()),
        (400, b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03garbage\r\n\r\n".to_vec()),
        (400, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec()),
        (413, b"POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: k\r\nContent-Length: 18446744073709551615\r\n\r\n".to_vec()),
    ];
    let mut wrong = Vec::new();
    for (status, bytes) in &cases {
        let what = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
        match raw(s.addr, bytes).expect("io") {
            None => wrong.push(format!("{what:?}: no answer")),
            Some(r) => {
                let problem = r.header("content-type") == Some("application/problem+json")
                    && serde_json::from_slice::<serde_json::Value>(&r.body)
                        .is_ok_and(|p| p["status"] == *status && p["detail"].is_string());
                if r.status != *status || !problem {
                    wrong.push(format!(
                        "{what:?}: {} with {:?} ({} body bytes), want a {status} problem",
                        r.status,
                        r.header("content-type"),
                        r.body.len()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} refusals wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

fn ambiguous_requests_are_refused_with_a_reason(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("ambiguous");
    let post = |key: &str, extra: &str, body: &[u8]| {
        let mut req = format!(
            "POST /api/charges HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nX-Customer-Id: {c}\r\nIdempotency-Key: {key}\r\n{extra}"
        )
        .into_bytes();
        req.extend_from_slice(body);
        raw(s.addr, &req).expect("io").expect("an answer")
    };
    let dup = br#"{"amount":0,"amount":100,"currency":"usd"}"#;
    let cases = [
        (
            "dup-member",
            format!("Content-Length: {}\r\n\r\n", dup.len()),
            dup.to_vec(),
            "duplicate",
        ),
        (
            "two-content-types",
            format!(
                "Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
                BODY.len()
            ),
            BODY.as_bytes().to_vec(),
            "Content-Type",
        ),
        (
            "gzip-chunked",
            "Transfer-Encoding: gzip, chunked\r\n\r\n".to_string(),
            format!("{:x}\r\n{BODY}\r\n0\r\n\r\n", BODY.len()).into_bytes(),
            "Transfer-Encoding",
        ),
    ];
    let mut wrong = Vec::new();
    for (key, extra, body, says) in &cases {
        let r = post(key, extra, body);
        let detail = serde_json::from_slice::<serde_json::Value>(&r.body)
            .ok()
            .and_then(|p| p["detail"].as_str().map(str::to_string))
            .unwrap_or_default();
        if r.status != 400 || !detail.contains(says) {
            wrong.push(format!("{key}: {} {:?}", r.status, r.text()));
        }
    }
    assert!(
        wrong.is_empty(),
        "accepted or unexplained:\n{}",
        wrong.join("\n")
    );
    assert_eq!(
        ledger(s.addr, &c)["count"],
        0,
        "an ambiguous request charged"
    );
}

fn pipelined_bodies_are_delimited_and_every_request_answered_in_order(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("pipe");
    let head = |key: &str, framing: &str| {
        format!(
            "POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Customer-Id: {c}\r\nIdempotency-Key: {key}\r\n{framing}\r\n"
        )
    };
    let mut all = head("p1", &format!("Content-Length: {}\r\n", BODY.len()));
    all.push_str(BODY);
    all.push_str(&head("p2", "Transfer-Encoding: chunked\r\n"));
    all.push_str(&format!(
        "5;ext=1\r\n{}\r\n{:x}\r\n{}\r\n0\r\nX-Trailer: t\r\n\r\n",
        &BODY[..5],
        BODY.len() - 5,
        &BODY[5..]
    ));
    all.push_str("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut sock = TcpStream::connect(s.addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    sock.write_all(all.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let _ = sock.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let statuses: Vec<&str> = text
        .match_indices("HTTP/1.1 ")
        .map(|(i, _)| &text[i + 9..i + 12])
        .collect();
    assert_eq!(statuses, ["201", "201", "200"], "{text}");
    assert_eq!(ledger(s.addr, &c)["count"], 2);
}

fn a_client_that_never_reads_is_cut_after_the_write_timeout(b: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let big = 32 * 1024 * 1024;
    std::fs::write(dir.path().join("big.bin"), vec![b'x'; big]).unwrap();
    let s = Server::start_with(b, &["--static", dir.path().to_str().unwrap()]);
    let mut sock = TcpStream::connect(s.addr).unwrap();
    sock.write_all(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    // Read nothing while the server's write stalls longer than its write timeout.
    std::thread::sleep(Duration::from_secs(13));
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = 0usize;
    let mut chunk = vec![0u8; 1 << 16];
    let ended = loop {
        match sock.read(&mut chunk) {
            Ok(0) => break true,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    assert!(
        ended && got < big,
        "a stalled reader still got {got} of {big} bytes (ended: {ended})"
    );
    assert_eq!(request(s.addr, "GET", "/healthz", &[], b"").status, 200);
}

both_stores!(
    a_half_closed_request_gets_its_answer,
    a_stalled_body_times_out_with_408,
    refusals_by_the_http_layer_are_problems,
    ambiguous_requests_are_refused_with_a_reason,
    pipelined_bodies_are_delimited_and_every_request_answered_in_order,
    a_client_that_never_reads_is_cut_after_the_write_timeout,
);
