//! The shop's promise, with real processes: an order whose request is killed
//! with `kill -9` after the provider answered and before the commit is
//! recovered once and never paid twice, whether the client retries it (409
//! while the lock is live, then one order) or never comes back (the reaper
//! completes it from the provider's record); a replay is byte for byte the
//! first answer. A burst of one key (a double-click) is one order. On SQLite
//! and on a real PostgreSQL.

#[path = "../../../server/tests/common/pg.rs"]
mod pg;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The lock timeout the shop runs with: a retry inside it is a 409.
const LOCK_MS: u64 = 3_000;

/// A child process, killed with SIGKILL when dropped; its stdout lines.
struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    fn start(bin: &str, args: &[&str]) -> Proc {
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
    fn expect(&self, prefix: &str) -> String {
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
    fn kill9(&mut self) {
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

struct Reply {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// One HTTP/1.1 request on its own connection; `None` when the connection
/// ends without an answer.
fn http(addr: &str, method: &str, path: &str, key: Option<&str>, body: &str) -> Option<Reply> {
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

fn orders(shop: &str) -> Vec<Value> {
    let r = http(shop, "GET", "/orders", None, "").expect("orders");
    r.json()["orders"].as_array().cloned().unwrap_or_default()
}

fn shop(database: &str, provider: &str, pause: bool) -> (Proc, String) {
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
    if pause {
        args.extend(["--pause-after-provider-ms", "600000"]);
    }
    let p = Proc::start(env!("CARGO_BIN_EXE_orders"), &args);
    let addr = p.expect("listening on http://");
    (p, addr)
}

fn killed_between_phases_then_retried_or_abandoned(database: &str) {
    let provider = Proc::start(env!("CARGO_BIN_EXE_provider"), &[]);
    let provider_url = format!("http://{}", provider.expect("listening on http://"));
    let provider_addr = provider_url.trim_start_matches("http://").to_string();

    // Two orders reach the provider, then the shop is killed before either commits.
    let (mut first, addr) = shop(database, &provider_url, true);
    let clients: Vec<_> = [
        ("k-retried", r#"{"amount":4200}"#),
        ("k-abandoned", r#"{"amount":990}"#),
    ]
    .into_iter()
    .map(|(key, body)| {
        let addr = addr.clone();
        std::thread::spawn(move || http(&addr, "POST", "/orders", Some(key), body))
    })
    .collect();
    let mut answered = [
        first.expect("provider answered "),
        first.expect("provider answered "),
    ];
    answered.sort();
    assert_eq!(answered, ["k-abandoned", "k-retried"]);
    first.kill9();
    for c in clients {
        assert!(c.join().unwrap().is_none(), "a killed shop answered");
    }
    let stats = http(&provider_addr, "GET", "/stats", None, "")
        .unwrap()
        .json();
    assert_eq!(stats["payments"], 2, "{stats}");

    // The shop comes back. The retried key is in progress until its lock times out.
    let (_second, addr) = shop(database, &provider_url, false);
    let started = Instant::now();
    assert!(
        orders(&addr).is_empty(),
        "nothing was committed before the kill"
    );
    let busy = http(
        &addr,
        "POST",
        "/orders",
        Some("k-retried"),
        r#"{"amount":4200}"#,
    )
    .unwrap();
    assert_eq!(busy.status, 409, "{}", String::from_utf8_lossy(&busy.body));
    assert_eq!(busy.header("retry-after").as_deref(), Some("1"));
    assert_eq!(
        busy.header("content-type").as_deref(),
        Some("application/problem+json")
    );
    assert_eq!(busy.json()["code"], "request_in_progress");
    let other = http(
        &addr,
        "POST",
        "/orders",
        Some("k-retried"),
        r#"{"amount":1}"#,
    )
    .unwrap();
    assert_eq!(other.status, 422, "another payload under the key");

    // Retried as a client would (Retry-After), it is one order with the first payment.
    let done = loop {
        std::thread::sleep(Duration::from_millis(250));
        let r = http(
            &addr,
            "POST",
            "/orders",
            Some("k-retried"),
            r#"{"amount":4200}"#,
        )
        .unwrap();
        if r.status != 409 {
            break r;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "still 409 after 20 s"
        );
    };
    assert_eq!(done.status, 201, "{}", String::from_utf8_lossy(&done.body));
    assert_eq!(done.json()["amount"], 4200);

    // Never retried, the other is completed by the reaper from the provider's record.
    let abandoned = loop {
        let all = orders(&addr);
        if let Some(o) = all.iter().find(|o| o["amount"] == 990) {
            break o.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not recovered: {all:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let all = orders(&addr);
    assert_eq!(all.len(), 2, "one order each: {all:?}");
    let stats = http(&provider_addr, "GET", "/stats", None, "")
        .unwrap()
        .json();
    assert_eq!(stats["payments"], 2, "nothing paid twice: {stats}");

    // A late retry of each is the stored answer, byte for byte.
    let again = http(
        &addr,
        "POST",
        "/orders",
        Some("k-retried"),
        r#"{ "amount": 4200 }"#,
    )
    .unwrap();
    assert_eq!((again.status, &again.body), (201, &done.body));
    assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
    let late = http(
        &addr,
        "POST",
        "/orders",
        Some("k-abandoned"),
        r#"{"amount":990}"#,
    )
    .unwrap();
    assert_eq!(late.status, 201);
    assert_eq!(late.header("idempotent-replayed").as_deref(), Some("true"));
    assert_eq!(late.json(), abandoned);
    assert_eq!(orders(&addr).len(), 2);
    let stats = http(&provider_addr, "GET", "/stats", None, "")
        .unwrap()
        .json();
    assert_eq!(stats["payments"], 2, "{stats}");
}

#[test]
fn sqlite_a_killed_order_is_recovered_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("shop.db").display());
    killed_between_phases_then_retried_or_abandoned(&db);
}

#[test]
fn postgres_a_killed_order_is_recovered_once() {
    let url = pg::Pg::shared().fresh_database();
    killed_between_phases_then_retried_or_abandoned(&url);
}

#[test]
fn refusals_are_problem_documents_and_store_nothing() {
    let provider = Proc::start(env!("CARGO_BIN_EXE_provider"), &[]);
    let provider_url = format!("http://{}", provider.expect("listening on http://"));
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("shop.db").display());
    let (_shop, addr) = shop(&db, &provider_url, false);
    let missing = http(&addr, "POST", "/orders", None, r#"{"amount":1}"#).unwrap();
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["code"], "missing_idempotency_key");
    let bad = http(&addr, "POST", "/orders", Some("a b"), r#"{"amount":1}"#).unwrap();
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["code"], "invalid_idempotency_key");
    assert!(orders(&addr).is_empty());
}

/// A double-click, or five: one order, one payment; every other answer is a
/// 409 with `Retry-After` or the first order's replay.
fn a_burst_of_one_key_is_one_order(database: &str) {
    let provider = Proc::start(env!("CARGO_BIN_EXE_provider"), &[]);
    let provider_url = format!("http://{}", provider.expect("listening on http://"));
    let provider_addr = provider_url.trim_start_matches("http://").to_string();
    let (_shop, addr) = shop(database, &provider_url, false);
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
    let stats = http(&provider_addr, "GET", "/stats", None, "")
        .unwrap()
        .json();
    assert_eq!(stats["payments"], 1, "{stats}");
}

#[test]
fn sqlite_a_burst_of_one_key_is_one_order() {
    let dir = tempfile::tempdir().unwrap();
    a_burst_of_one_key_is_one_order(&format!("sqlite:{}", dir.path().join("shop.db").display()));
}

#[test]
fn postgres_a_burst_of_one_key_is_one_order() {
    a_burst_of_one_key_is_one_order(&pg::Pg::shared().fresh_database());
}

/// The project's conformance runner (conformance/cli.mjs), which asks of any
/// backend what the idemkey module relies on, passes the shop: replays,
/// concurrent tries, another payload, missing and malformed keys, a retry
/// after a lost answer (its handler dropped mid-way), customers apart.
fn the_conformance_runner_passes(database: &str) {
    let provider = Proc::start(env!("CARGO_BIN_EXE_provider"), &[]);
    let provider_url = format!("http://{}", provider.expect("listening on http://"));
    let (_shop, addr) = shop(database, &provider_url, false);
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

#[test]
fn sqlite_the_conformance_runner_passes() {
    let dir = tempfile::tempdir().unwrap();
    the_conformance_runner_passes(&format!("sqlite:{}", dir.path().join("shop.db").display()));
}

#[test]
fn postgres_the_conformance_runner_passes() {
    the_conformance_runner_passes(&pg::Pg::shared().fresh_database());
}
