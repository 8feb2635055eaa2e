//! What the shop's tests share: the shop and its provider as real processes
//! (killed with SIGKILL when dropped), one HTTP/1.1 request per connection,
//! and the customer's orders as the shop lists them.

#![allow(dead_code)] // each test file uses its own part of it

#[path = "../../../../server/tests/common/pg.rs"]
pub mod pg;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// The lock timeout the shop runs with: a retry inside it is a 409.
pub const LOCK_MS: u64 = 3_000;

/// A child process, killed with SIGKILL when dropped; its stdout lines.
pub struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    pub fn start(bin: &str, args: &[&str]) -> Proc {
        let mut child = Command::new(bin)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{bin}: {e}"));
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Proc { child, lines }
    }

    /// Waits for a stdout line starting with `prefix`; returns the rest.
    pub fn expect(&self, prefix: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("no line `{prefix}…` within 20 s"));
            if let Some(rest) = line.strip_prefix(prefix) {
                return rest.to_string();
            }
        }
    }

    /// `kill -9`.
    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// One HTTP/1.1 request on its own connection; `None` when the connection
/// ends without an answer.
pub fn http(addr: &str, method: &str, path: &str, key: Option<&str>, body: &str) -> Option<Reply> {
    let mut s = TcpStream::connect(addr).expect("connect");
    let key = key.map_or(String::new(), |k| format!("Idempotency-Key: \"{k}\"\r\n"));
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nX-Customer-Id: cus_1\r\n{key}\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, _) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let body = raw[head.len() + 4..].to_vec();
    Some(Reply {
        status,
        head: head.to_string(),
        body,
    })
}

pub fn orders(shop: &str) -> Vec<Value> {
    let r = http(shop, "GET", "/orders", None, "").expect("orders");
    r.json()["orders"].as_array().cloned().unwrap_or_default()
}

/// The shop on `database`, paying at `provider`, with `extra` arguments;
/// its address.
pub fn shop(database: &str, provider: &str, extra: &[&str]) -> (Proc, String) {
    let lock = LOCK_MS.to_string();
    let mut args = vec![
        "--database",
        database,
        "--provider",
        provider,
        "--lock-timeout-ms",
        &lock,
        "--secret",
        "the shop's fingerprint secret, 32 bytes or more",
    ];
    args.extend(extra);
    let p = Proc::start(env!("CARGO_BIN_EXE_orders"), &args);
    let addr = p.expect("listening on http://");
    (p, addr)
}

/// Each order waits between the provider's answer and the commit, for a `kill -9`.
pub const PAUSE: &[&str] = &["--pause-after-provider-ms", "600000"];

/// The provider in its own process: it, its URL for the shop, its address.
pub fn provider() -> (Proc, String, String) {
    let p = Proc::start(env!("CARGO_BIN_EXE_provider"), &[]);
    let url = format!("http://{}", p.expect("listening on http://"));
    let addr = url.trim_start_matches("http://").to_string();
    (p, url, addr)
}

/// The provider's counts: `calls` and `payments`.
pub fn provider_stats(addr: &str) -> Value {
    http(addr, "GET", "/stats", None, "").expect("stats").json()
}

/// A temporary SQLite database for the shop (the directory lives as long as the guard).
pub fn sqlite_db() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = format!("sqlite:{}", dir.path().join("shop.db").display());
    (dir, db)
}

/// A double-click, or five: one order, one payment; every other answer is a
/// 409 with `Retry-After` or the first order's replay; the shop runs with
/// the `mode` arguments.
pub fn a_burst_of_one_key_is_one_order(database: &str, mode: &[&str]) {
    let (_provider, provider_url, provider_addr) = provider();
    let (_shop, addr) = shop(database, &provider_url, mode);
    let burst: Vec<_> = (0..5)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                http(
                    &addr,
                    "POST",
                    "/orders",
                    Some("k-burst"),
                    r#"{"amount":1500}"#,
                )
                .unwrap()
            })
        })
        .collect();
    let replies: Vec<Reply> = burst.into_iter().map(|t| t.join().unwrap()).collect();
    let first: Vec<&Reply> = replies
        .iter()
        .filter(|r| r.status == 201 && r.header("idempotent-replayed").is_none())
        .collect();
    assert_eq!(first.len(), 1, "one request did the work");
    for r in &replies {
        match (r.status, r.header("idempotent-replayed")) {
            (201, _) => assert_eq!(r.body, first[0].body, "replays are the first answer"),
            (409, None) => assert_eq!(r.header("retry-after").as_deref(), Some("1")),
            other => panic!("unexpected answer {other:?}"),
        }
    }
    assert_eq!(orders(&addr).len(), 1);
    let stats = provider_stats(&provider_addr);
    assert_eq!(stats["payments"], 1, "{stats}");
}

/// The project's conformance runner (conformance/cli.mjs), which asks of any
/// backend what the idemkey module relies on, passes the shop: replays,
/// concurrent tries, another payload, missing and malformed keys, a retry
/// after a lost answer (its handler dropped mid-way), customers apart; the
/// shop runs with the `mode` arguments.
pub fn the_conformance_runner_passes(database: &str, mode: &[&str]) {
    let (_provider, provider_url, _) = provider();
    let (_shop, addr) = shop(database, &provider_url, mode);
    let url = format!("http://{addr}/orders");
    let cli = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/cli.mjs");
    let out = Command::new("node")
        .args([cli, &url, "--ledger", &url, "--ledger-count", "orders"])
        .args([
            "--scope-header",
            "X-Customer-Id",
            "--key-format",
            "sf-string",
        ])
        .output()
        .expect("node runs the conformance runner");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        report.contains("All 8 checks idemkey depends on passed."),
        "{report}"
    );
}
