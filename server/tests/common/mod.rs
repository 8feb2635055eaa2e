//! Test harness: starts the real `idemkey-server` binary on an ephemeral port
//! with a temporary SQLite file or a fresh PostgreSQL database (see `pg`), and
//! speaks HTTP/1.1 to it over plain TCP. [`both_stores!`] runs each test on
//! both stores.
//!
//! The client is hand-written (about a hundred lines) on purpose: the tests
//! need to send malformed headers and invalid bytes that a real HTTP client
//! refuses to produce, and to see a connection that closes with no response.
#![allow(dead_code)]

pub mod nginx;
pub mod pg;
pub mod process;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use self::process::Proc;

/// Which store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite, one file.
    Sqlite,
    /// The test binary's PostgreSQL, a fresh database.
    Postgres,
}

/// Runs each named `fn(Backend)` as a test on SQLite and on PostgreSQL.
#[macro_export]
macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[test] fn $name() { super::$name($crate::common::Backend::Sqlite) } )*
        }
        mod postgres {
            $( #[test] fn $name() { super::$name($crate::common::Backend::Postgres) } )*
        }
    };
}

/// A store for one test: an SQLite file, or a fresh PostgreSQL database with
/// the provider stand-in's SQLite file beside it. Servers started on one `Db`
/// share its data, as restarts and instances do.
pub struct Db {
    /// Which store.
    pub backend: Backend,
    /// The SQLite file (for PostgreSQL: the provider's file).
    pub file: PathBuf,
    /// The PostgreSQL URL.
    pub url: Option<String>,
    /// The PostgreSQL server's port.
    pg_port: u16,
    dir: tempfile::TempDir,
}

fn sql_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl Db {
    /// A new, empty store.
    pub fn new(backend: Backend) -> Db {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("tempdir");
                Db {
                    backend,
                    file: dir.path().join("idemkey.db"),
                    url: None,
                    pg_port: 0,
                    dir,
                }
            }
            Backend::Postgres => Db::on(pg::Pg::shared()),
        }
    }

    /// A fresh database on the PostgreSQL server `pg`.
    pub fn on(pg: &pg::Pg) -> Db {
        let dir = tempfile::tempdir().expect("tempdir");
        Db {
            backend: Backend::Postgres,
            file: dir.path().join("provider.db"),
            url: Some(pg.fresh_database()),
            pg_port: pg.port,
            dir,
        }
    }

    /// The flags that point a server at this store.
    pub fn args(&self) -> Vec<std::ffi::OsString> {
        match &self.url {
            None => vec!["--db".into(), self.file.clone().into()],
            Some(url) => vec![
                "--database-url".into(),
                url.into(),
                "--provider-db".into(),
                self.file.clone().into(),
            ],
        }
    }

    /// A directory for logs and other files of this test.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs one statement (values inlined with [`Db::quote`]); returns the
    /// first column of the first row as text, if any.
    pub fn sql(&self, sql: &str) -> Option<String> {
        match &self.url {
            None => {
                let conn = rusqlite::Connection::open(&self.file).ok()?;
                conn.busy_timeout(Duration::from_secs(5)).ok()?;
                let mut stmt = conn.prepare(sql).expect("sql");
                let mut rows = stmt.query([]).expect("query");
                let row = rows.next().expect("row")?;
                row.get::<_, rusqlite::types::Value>(0)
                    .ok()
                    .map(|v| match v {
                        rusqlite::types::Value::Integer(i) => i.to_string(),
                        rusqlite::types::Value::Text(t) => t,
                        other => format!("{other:?}"),
                    })
            }
            Some(url) => {
                let db = url.rsplit('/').next().unwrap();
                let out = pg::psql(self.pg_port, db, sql);
                out.lines().next().map(str::to_string)
            }
        }
    }

    /// `s` as an SQL string literal.
    pub fn quote(s: &str) -> String {
        sql_quote(s)
    }
}

/// A running server process.
pub struct Server {
    proc: Proc,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its stderr log.
    pub log: PathBuf,
    /// Its SQLite file (with PostgreSQL: the provider stand-in's file).
    pub db: PathBuf,
    store: Option<Db>,
}

impl Server {
    /// Starts a server on a fresh SQLite file with `args`.
    pub fn start(args: &[&str]) -> Server {
        Server::start_with(Backend::Sqlite, args)
    }

    /// Starts a server on a fresh store of `backend` with `args`.
    pub fn start_with(backend: Backend, args: &[&str]) -> Server {
        let db = Db::new(backend);
        let mut s = Server::start_on(&db, args);
        s.store = Some(db);
        s
    }

    /// Starts a server on an existing (or new) store.
    pub fn start_on(db: &Db, args: &[&str]) -> Server {
        let log = db.dir().join(format!(
            "server.log.{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_idemkey-server"));
        cmd.args(["--addr", "127.0.0.1:0"])
            .args(db.args())
            // Quiet unless the test asks for a level itself.
            .args(if args.contains(&"--log-level") {
                &[][..]
            } else {
                &["--log-level", "warn"][..]
            })
            .args(args);
        let (proc, addr) = listening(cmd, &log);
        Server {
            proc,
            addr,
            log,
            db: db.file.clone(),
            store: None,
        }
    }

    /// Starts a server on the SQLite file `file` (kept by the caller).
    pub fn start_on_file(file: &Path, args: &[&str]) -> Server {
        let mut full = vec!["--db", file.to_str().expect("a UTF-8 path")];
        full.extend_from_slice(args);
        let db = Db::new(Backend::Sqlite);
        let log = db.dir().join("server.log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_idemkey-server"));
        cmd.args(["--addr", "127.0.0.1:0", "--log-level", "warn"])
            .args(&full);
        let (proc, addr) = listening(cmd, &log);
        Server {
            proc,
            addr,
            log,
            db: file.to_path_buf(),
            store: Some(db),
        }
    }

    /// The store this server started with [`Server::start`] owns.
    pub fn db(&self) -> &Db {
        self.store.as_ref().expect("a server from Server::start")
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// SIGKILL, no shutdown.
    pub fn kill9(&mut self) {
        self.proc.kill9();
    }

    /// Waits for the process to exit by itself (e.g. an abort fault).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self.proc.wait_exit(timeout)
    }

    /// The server's stderr so far.
    pub fn log_text(&self) -> String {
        self.proc.log_text()
    }
}

/// Starts `cmd` (the server or the provider service) and reads the address
/// of its `listening on http://ADDR` line.
fn listening(cmd: Command, log: &Path) -> (Proc, SocketAddr) {
    let (proc, line) = Proc::start(cmd, log);
    let addr = line
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| {
            panic!(
                "no listening line (got {line:?}); log:\n{}",
                proc.log_text()
            )
        })
        .parse()
        .expect("address");
    (proc, addr)
}

/// A parsed HTTP response.
#[derive(Debug, Clone)]
pub struct Resp {
    /// Status code.
    pub status: u16,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Raw body bytes (chunked encoding removed).
    pub body: Vec<u8>,
}

impl Resp {
    /// First header value by (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    /// Body as text (lossy), for assertion messages.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }
    /// Body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.text()))
    }
    /// True with `Idempotent-Replayed: true`.
    pub fn replayed(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }
    /// Asserts an RFC 9457 problem with this status.
    pub fn assert_problem(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "body: {}", self.text());
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json")
        );
        let p = self.json();
        assert_eq!(p["status"], status);
        for m in ["type", "title", "detail", "code"] {
            assert!(p[m].is_string(), "problem member {m} missing: {p}");
        }
        p
    }
}

/// Sends raw bytes on a fresh connection and reads the whole answer.
/// `Ok(None)`: the server closed the connection without answering.
pub fn raw(addr: SocketAddr, bytes: &[u8]) -> std::io::Result<Option<Resp>> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    // The server may answer (413) before reading everything; keep going.
    let _ = s.write_all(bytes);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset && !buf.is_empty() => break,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    if buf.is_empty() {
        return Ok(None);
    }
    Ok(Some(parse_response(&buf)))
}

/// Sends raw bytes on a fresh connection and reads every answer until the
/// server closes it (none when it closed without a word).
pub fn raw_all(addr: SocketAddr, bytes: &[u8]) -> Vec<Resp> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = s.write_all(bytes);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("reading the answers: {e} (the server kept the connection open?)"),
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let (r, used) = parse_one(&buf[at..]);
        out.push(r);
        at += used;
    }
    out
}

/// Parses one response from the bytes of a connection (head, then the body by its framing).
pub fn parse_response(buf: &[u8]) -> Resp {
    parse_one(buf).0
}

/// One response from the start of `buf`, and how many bytes it took.
fn parse_one(buf: &[u8]) -> (Resp, usize) {
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head");
    let head = std::str::from_utf8(&buf[..end]).expect("ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .expect("status")
        .parse()
        .expect("status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &buf[end + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        let mut out = Vec::new();
        let mut r = rest;
        loop {
            let nl = r
                .windows(2)
                .position(|w| w == b"\r\n")
                .expect("chunk size line");
            let size = usize::from_str_radix(
                std::str::from_utf8(&r[..nl])
                    .unwrap()
                    .split(';')
                    .next()
                    .unwrap()
                    .trim(),
                16,
            )
            .unwrap();
            r = &r[nl + 2..];
            if size == 0 {
                // No trailers are sent: the final CRLF.
                r = &r[2.min(r.len())..];
                break;
            }
            out.extend_from_slice(&r[..size]);
            r = &r[size + 2..];
        }
        (out, buf.len() - r.len())
    } else if let Some(len) = headers.iter().find(|(n, _)| n == "content-length") {
        let len: usize = len.1.parse().unwrap();
        assert!(rest.len() >= len, "short body");
        (rest[..len].to_vec(), end + 4 + len)
    } else {
        (rest.to_vec(), buf.len())
    };
    let (body, used) = body;
    (
        Resp {
            status,
            headers,
            body,
        },
        used,
    )
}

/// One request with `Connection: close` and a Content-Length.
pub fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Option<Resp>> {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    raw(addr, &bytes)
}

/// Like [`try_request`] but panics when there is no response.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    try_request(addr, method, path, headers, body)
        .expect("io")
        .expect("the server closed the connection without a response")
}

/// `POST /api/charges` as `customer` with `key` and a JSON body.
pub fn charge(addr: SocketAddr, customer: &str, key: &str, body: &str) -> Resp {
    try_charge(addr, customer, key, body)
        .expect("io")
        .expect("no response")
}

/// Like [`charge`] but returns `None` when the connection closed unanswered.
pub fn try_charge(
    addr: SocketAddr,
    customer: &str,
    key: &str,
    body: &str,
) -> std::io::Result<Option<Resp>> {
    try_request(
        addr,
        "POST",
        "/api/charges",
        &[
            ("Content-Type", "application/json"),
            ("X-Customer-Id", customer),
            ("Idempotency-Key", key),
        ],
        body.as_bytes(),
    )
}

/// `GET path` as `customer`, JSON body.
pub fn get_json(addr: SocketAddr, path: &str, customer: &str) -> Value {
    let r = request(addr, "GET", path, &[("X-Customer-Id", customer)], b"");
    assert_eq!(r.status, 200, "GET {path}: {}", r.text());
    r.json()
}

/// The customer's ledger.
pub fn ledger(addr: SocketAddr, customer: &str) -> Value {
    get_json(addr, "/api/charges", customer)
}

/// The provider stand-in's `(calls, payments)` for `customer`.
pub fn provider_counts(addr: SocketAddr, customer: &str) -> (i64, i64) {
    let p = get_json(addr, "/api/provider", customer);
    (
        p["calls"].as_i64().expect("calls"),
        p["payments"].as_i64().expect("payments"),
    )
}

/// The `key` of every charge in a ledger, in ledger order (oldest first).
pub fn charge_keys(ledger: &Value) -> Vec<&str> {
    ledger["charges"]
        .as_array()
        .expect("charges")
        .iter()
        .map(|ch| ch["key"].as_str().expect("key"))
        .collect()
}

/// Schedules a fault for `customer`.
pub fn fault(addr: SocketAddr, customer: &str, body: &str) -> Value {
    let r = request(
        addr,
        "POST",
        "/api/faults",
        &[
            ("Content-Type", "application/json"),
            ("X-Customer-Id", customer),
        ],
        body.as_bytes(),
    );
    assert_eq!(r.status, 200, "POST /api/faults: {}", r.text());
    r.json()
}

/// A unique-enough id for customers and keys.
pub fn uid(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}-{}-{nanos:x}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A valid charge body.
pub const BODY: &str =
    r#"{"amount":4200,"currency":"usd","items":[{"sku":"tee","qty":2}],"card":"4242424242424242"}"#;

/// The state of a key row (`in_progress` / `done`), read straight from the
/// store: lets a test wait for "phase 1 committed" instead of sleeping and
/// hoping.
pub fn key_state(db: &Db, customer: &str, key: &str) -> Option<String> {
    db.sql(&format!(
        "SELECT state FROM idempotency_keys WHERE customer = {} AND idem_key = {}",
        Db::quote(customer),
        Db::quote(key)
    ))
}

/// Waits (up to 30 s) until phase 1 has reserved `key`.
pub fn wait_reserved(db: &Db, customer: &str, key: &str) {
    let t0 = std::time::Instant::now();
    while key_state(db, customer, key).as_deref() != Some("in_progress") {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "key {key} was never reserved"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A running `idemkey-server provider` process.
pub struct ProviderProc {
    _proc: Proc,
    /// Its base URL, `http://127.0.0.1:PORT`.
    pub url: String,
    /// Where it listens.
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl ProviderProc {
    /// Starts the provider service with its own SQLite file.
    pub fn start(latency_ms: u64) -> ProviderProc {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("provider.log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_idemkey-server"));
        cmd.args([
            "provider",
            "--addr",
            "127.0.0.1:0",
            "--log-level",
            "warn",
            "--db",
        ])
        .arg(dir.path().join("provider.db"))
        .args(["--latency-ms", &latency_ms.to_string()]);
        let (proc, addr) = listening(cmd, &log);
        ProviderProc {
            _proc: proc,
            url: format!("http://{addr}"),
            addr,
            _dir: dir,
        }
    }
}
