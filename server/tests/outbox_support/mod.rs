//! Helpers of the receipt tests: the worker as its own process, the
//! receipts endpoint, waiting for a condition with a deadline, and reads of
//! the outbox straight from the SQLite file.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::process::Proc;
use crate::common::{get_json, Db};

/// `idemkey-server worker` on a database.
pub struct WorkerProc {
    proc: Proc,
    /// Its id, as its claims record it.
    pub id: String,
}

impl WorkerProc {
    /// Starts a worker on the store of `db` with `args`; returns once it
    /// printed `worker ID running`.
    pub fn start(db: &Db, args: &[&str]) -> WorkerProc {
        let log = db.dir().join(format!(
            "worker.{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_idemkey-server"));
        cmd.arg("worker")
            .args(match &db.url {
                None => vec!["--db".into(), db.file.clone().into_os_string()],
                Some(url) => vec!["--database-url".into(), url.into()],
            })
            .args(args);
        let (proc, line) = Proc::start(cmd, &log);
        let id = line
            .strip_prefix("worker ")
            .and_then(|l| l.strip_suffix(" running"))
            .unwrap_or_else(|| {
                panic!(
                    "no `worker ID running` line (got {line:?}); log:\n{}",
                    proc.log_text()
                )
            })
            .to_string();
        WorkerProc { proc, id }
    }

    /// SIGKILL, no shutdown.
    pub fn kill9(&mut self) {
        self.proc.kill9();
    }

    /// Waits for the process to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self.proc.wait_exit(timeout)
    }

    /// Its stderr so far.
    pub fn log_text(&self) -> String {
        self.proc.log_text()
    }
}

/// `GET /api/receipts` of `customer`.
pub fn receipts(addr: SocketAddr, customer: &str) -> Value {
    get_json(addr, "/api/receipts", customer)
}

/// Polls `f` every 50 ms until it gives `Some`, for at most `timeout`.
pub fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            t0.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The receipts view once every event of `customer` is past pending and
/// there are `events` of them.
pub fn settled(addr: SocketAddr, customer: &str, events: usize, timeout: Duration) -> Value {
    wait_for("every event delivered or parked", timeout, || {
        let r = receipts(addr, customer);
        let ev = r["events"].as_array().expect("events");
        (ev.len() == events && ev.iter().all(|e| e["state"] != "pending")).then_some(r)
    })
}

/// Receipts per charge id in a receipts view.
pub fn receipts_per_charge(view: &Value) -> std::collections::HashMap<String, usize> {
    let mut n = std::collections::HashMap::new();
    for r in view["receipts"].as_array().expect("receipts") {
        *n.entry(r["charge_id"].as_str().expect("charge_id").to_string())
            .or_insert(0) += 1;
    }
    n
}

/// One integer from the store (the first column of the first row).
pub fn count(db: &Db, sql: &str) -> i64 {
    db.sql(sql)
        .unwrap_or_else(|| panic!("no row: {sql}"))
        .parse()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}
