//! Connection reuse: kept alive normally, closed after every answer under `--faults`
//! (so a dropped answer reaches the browser as a network error instead of being
//! re-sent silently by Chromium on a reused connection).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::*;

/// Sends one keep-alive GET /healthz and returns the answer's head, lowercased.
fn head_of_keep_alive_request(server: &Server) -> String {
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).expect("read head"), 1, "closed mid-head");
        buf.push(byte[0]);
    }
    String::from_utf8(buf).unwrap().to_ascii_lowercase()
}

fn connections_are_kept_alive_without_faults(b: Backend) {
    let server = Server::start_with(b, &[]);
    let head = head_of_keep_alive_request(&server);
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(!head.contains("connection: close"), "{head}");
}

fn every_answer_closes_its_connection_under_faults(b: Backend) {
    let server = Server::start_with(b, &["--faults"]);
    let head = head_of_keep_alive_request(&server);
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("connection: close"), "{head}");
}

both_stores!(
    connections_are_kept_alive_without_faults,
    every_answer_closes_its_connection_under_faults,
);
