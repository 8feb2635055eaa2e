//! The HTTP layer under hostile clients: half-closed sockets get their answer,
//! stalled bodies time out, broken framing gets hyper's refusal and a closed
//! connection, and what hyper accepts but is ambiguous is refused with a
//! problem+json reason.

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

/// Broken framing is hyper's to refuse: its own status, an empty body, and the
/// connection closed (nothing after the broken head is read as a request).
fn broken_framing_gets_hypers_refusal_and_a_close(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("framing");
    let many: String = (0..101).map(|i| format!("X-H{i}: 1\r\n")).collect();
    let long_uri = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70 * 1024));
    let charge_head = format!(
        "POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Customer-Id: {c}\r\nIdempotency-Key: k\r\n"
    );
    let next = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    // (status hyper answers, or None when it closes without a word; the bytes)
    let cases: Vec<(Option<u16>, Vec<u8>)> = vec![
        (
            Some(400),
            format!("{charge_head}Content-Length: abc\r\n\r\n{next}").into_bytes(),
        ),
        (
            Some(400),
            format!("{charge_head}Content-Length: 2, 2\r\n\r\n{{}}{next}").into_bytes(),
        ),
        (
            Some(400),
            format!("{charge_head}Content-Length: +2\r\n\r\n{{}}{next}").into_bytes(),
        ),
        (
            Some(400),
            format!("{charge_head}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{{}}x{next}")
                .into_bytes(),
        ),
        (
            Some(400),
            format!("{charge_head}Content-Length: 99999999999999999999999\r\n\r\n{next}")
                .into_bytes(),
        ),
        (
            Some(431),
            format!("{charge_head}Content-Length: 18446744073709551615\r\n\r\n{next}").into_bytes(),
        ),
        (
            Some(400),
            format!("{charge_head}Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n{next}")
                .into_bytes(),
        ),
        (
            Some(400),
            b"POST /api/charges HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec(),
        ),
        (
            Some(400),
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n".to_vec(),
        ),
        (
            Some(400),
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n".to_vec(),
        ),
        (
            Some(400),
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n folded\r\n\r\n".to_vec(),
        ),
        (
            Some(431),
            format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{many}\r\n").into_bytes(),
        ),
        (Some(431), long_uri.into_bytes()),
        (
            Some(400),
            b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03garbage\r\n\r\n".to_vec(),
        ),
        (
            Some(400),
            b"GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n".to_vec(),
        ),
        (None, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec()),
    ];
    let mut wrong = Vec::new();
    for (status, bytes) in &cases {
        let what = String::from_utf8_lossy(&bytes[..bytes.len().min(100)]).into_owned();
        let got = raw_all(s.addr, bytes);
        let statuses: Vec<u16> = got.iter().map(|r| r.status).collect();
        let want: Vec<u16> = status.iter().copied().collect();
        if statuses != want || got.iter().any(|r| !r.body.is_empty()) {
            wrong.push(format!(
                "{what:?}: {statuses:?}, want {want:?} with empty bodies"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} framings answered otherwise:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    assert_eq!(ledger(s.addr, &c)["count"], 0, "broken framing charged");
}

/// What hyper accepts but the rules over parsed requests refuse: a
/// problem+json with a reason, and the connection closed.
fn refusals_by_the_request_rules_are_problems(b: Backend) {
    let s = Server::start_with(b, &["--provider-latency-ms", "5"]);
    let c = uid("rules");
    let charge_head = format!(
        "POST /api/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Customer-Id: {c}\r\nIdempotency-Key: k\r\n"
    );
    let next = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    let body = BODY;
    let n = BODY.len();
    let cases: Vec<(u16, &str, Vec<u8>)> = vec![
        (400, "Content-Length and Transfer-Encoding", format!("{charge_head}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{next}").into_bytes()),
        (400, "Transfer-Encoding", format!("{charge_head}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n{n:x}\r\n{body}\r\n0\r\n\r\n{next}").into_bytes()),
        (400, "Host", b"GET /healthz HTTP/1.1\r\n\r\n".to_vec()),
        (400, "Host", b"GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n".to_vec()),
        (400, "CONNECT", b"CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n".to_vec()),
        (400, "request target", b"GET * HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        (414, "8 KiB", format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(10 * 1024)).into_bytes()),
        (413, "65536", format!("{charge_head}Content-Length: 10000000\r\n\r\n").into_bytes()),
    ];
    let mut wrong = Vec::new();
    for (status, says, bytes) in &cases {
        let what = String::from_utf8_lossy(&bytes[..bytes.len().min(100)]).into_owned();
        let got = raw_all(s.addr, bytes);
        let ok = match got.as_slice() {
            [r] => {
                r.header("content-type") == Some("application/problem+json")
                    && r.status == *status
                    && serde_json::from_slice::<serde_json::Value>(&r.body).is_ok_and(|p| {
                        p["status"] == *status
                            && p["detail"].as_str().is_some_and(|d| d.contains(says))
                    })
            }
            _ => false,
        };
        if !ok {
            let shown: Vec<String> = got
                .iter()
                .map(|r| format!("{} {}", r.status, r.text()))
                .collect();
            wrong.push(format!(
                "{what:?}: {shown:?}, want one {status} problem saying {says:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} refusals wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    assert_eq!(ledger(s.addr, &c)["count"], 0, "a refused request charged");
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

/// Pipelined requests are answered in order; a chunked one is answered with
/// `Connection: close` and nothing after it is read as a request (what
/// follows a chunked body is where a smuggled request would be).
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
    all.push_str("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    all.push_str(&head("p2", "Transfer-Encoding: chunked\r\n"));
    all.push_str(&format!(
        "5;ext=1\r\n{}\r\n{:x}\r\n{}\r\n0\r\nX-Trailer: t\r\n\r\n",
        &BODY[..5],
        BODY.len() - 5,
        &BODY[5..]
    ));
    all.push_str(&head("p3", &format!("Content-Length: {}\r\n", BODY.len())));
    all.push_str(BODY);
    let answers = raw_all(s.addr, all.as_bytes());
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [201, 200, 201]);
    assert_eq!(answers[2].header("connection"), Some("close"));
    assert_eq!(charge_keys(&ledger(s.addr, &c)), ["p1", "p2"]);
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
    broken_framing_gets_hypers_refusal_and_a_close,
    refusals_by_the_request_rules_are_problems,
    ambiguous_requests_are_refused_with_a_reason,
    pipelined_bodies_are_delimited_and_every_request_answered_in_order,
    a_client_that_never_reads_is_cut_after_the_write_timeout,
);
