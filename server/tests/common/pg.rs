//! A real PostgreSQL for the tests: one server per test binary, on a free
//! port and a temporary directory, with a fresh database per test.
//!
//! PostgreSQL refuses to run as root, so initdb and pg_ctl run as the
//! `postgres` user (runuser). It is stopped however the test binary ends: a
//! watchdog process polls the binary's pid and stops the server and removes
//! its directory once the binary is gone, even after a panic or a SIGKILL.
//! Directories left by a watchdog that could not run are cleaned at start.
//! Durability is off (fsync, synchronous_commit): the tests kill server
//! instances, never the machine, and a clean stop still writes everything.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Debian's PostgreSQL 15 binaries.
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
const DIR_PREFIX: &str = "idemkey-pg-";

/// One running PostgreSQL server.
pub struct Pg {
    /// Its directory (data, socket, log).
    pub dir: PathBuf,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    /// Stopped and removed on drop (the shared one lives as long as the binary).
    private: bool,
}

impl Drop for Pg {
    fn drop(&mut self) {
        if self.private {
            let _ = as_postgres("pg_ctl")
                .arg("-D")
                .arg(self.dir.join("data"))
                .args(["stop", "-m", "immediate"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn as_postgres(tool: &str) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", "postgres", "--", &format!("{PG_BIN}/{tool}")]);
    c
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Stops the servers and removes the directories of test binaries that are
/// gone (their watchdog did not get to it).
fn clean_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(DIR_PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let data = e.path().join("data");
        if data.join("postmaster.pid").exists() {
            let _ = as_postgres("pg_ctl")
                .arg("-D")
                .arg(&data)
                .args(["stop", "-m", "immediate"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = std::fs::remove_dir_all(e.path());
    }
}

impl Pg {
    /// The test binary's server, started on first use.
    pub fn shared() -> &'static Pg {
        static PG: OnceLock<Pg> = OnceLock::new();
        PG.get_or_init(|| Pg::start(false))
    }

    /// A server of the caller's own (for a test that stops it), stopped on drop.
    pub fn start_private() -> Pg {
        Pg::start(true)
    }

    fn start(private: bool) -> Pg {
        clean_stale_dirs();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!("{DIR_PREFIX}{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("pg dir");
        let st = Command::new("chown")
            .arg("postgres")
            .arg(&dir)
            .status()
            .expect("chown");
        assert!(st.success(), "chown postgres {}", dir.display());
        let out = as_postgres("initdb")
            .arg("-D")
            .arg(dir.join("data"))
            .args(["-A", "trust", "-U", "postgres", "--no-sync"])
            .output()
            .expect("initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The watchdog first, so nothing outlives the binary from here on.
        let me = std::process::id();
        let script = format!(
            "while kill -0 {me} 2>/dev/null; do sleep 0.5; done; \
             runuser -u postgres -- {PG_BIN}/pg_ctl -D '{d}/data' stop -m immediate >/dev/null 2>&1; \
             rm -rf '{d}'",
            d = dir.display()
        );
        // Detached on purpose: it must outlive this process to clean up after it.
        #[allow(clippy::zombie_processes)]
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pg watchdog");
        let mut pg = Pg {
            dir,
            port: 0,
            private,
        };
        let mut last = String::new();
        for _ in 0..5 {
            pg.port = free_port();
            match pg.pg_ctl_start() {
                Ok(()) => return pg,
                Err(e) => last = e,
            }
        }
        panic!("PostgreSQL did not start: {last}");
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        let opts = format!(
            "-k {} -p {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=300",
            self.dir.display(),
            self.port
        );
        let out = as_postgres("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-o", &opts, "-l"])
            .arg(self.dir.join("log"))
            .args(["-w", "-t", "30", "start"])
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
            ))
        }
    }

    /// Stops the server (fast shutdown: sessions are cut), as an outage would.
    pub fn stop(&self) {
        let st = as_postgres("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["stop", "-m", "fast", "-w"])
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl stop");
        assert!(st.success(), "pg_ctl stop");
    }

    /// Starts it again on the same port.
    pub fn restart(&self) {
        self.pg_ctl_start().expect("PostgreSQL restart");
    }

    /// A new, empty database; returns its URL.
    pub fn fresh_database(&self) -> String {
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!("t{}", N.fetch_add(1, Ordering::Relaxed));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in database `db` with psql; returns its unaligned output.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        psql(self.port, db, sql)
    }
}

/// Runs `sql` in database `db` of the server on `port`; returns its
/// unaligned output. Retries for a while if the server is restarting.
pub fn psql(port: u16, db: &str, sql: &str) -> String {
    let t0 = Instant::now();
    loop {
        let out = Command::new(format!("{PG_BIN}/psql"))
            .args([
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
            ])
            .args(["-p", &port.to_string(), "-d", db, "-c", sql])
            .output()
            .expect("psql");
        if out.status.success() {
            return String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        // The server may be restarting under a test; anything else fails now.
        assert!(
            err.contains("could not connect") || err.contains("Connection refused"),
            "psql {sql:?}: {err}"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "psql {sql:?}: {err}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
