//! Test harness: starts the real `idemkey-server` binary on an ephemeral port
//! with a temporary SQLite file or a fresh PostgreSQL database (see `pg`), and
//! speaks HTTP/1.1 to it over plain TCP (`http`). [`both_stores!`] runs each test on
//! both stores.
//!
//! The client is hand-written (about a hundred lines) on purpose: the tests
//! need to send malformed headers and invalid bytes that a real HTTP client
//! refuses to produce, and to see a connection that closes with no response.
#![allow(dead_code)]

pub mod http;
pub mod nginx;
pub mod pg;
pub mod process;

#[allow(unused_imports)]
pub use self::http::*;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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
