//! `idemkey-server worker`: the receipt worker as its own process.
//!
//! Several may run against one database (SQLite or PostgreSQL) beside any number of servers
//! started with `--no-receipt-worker` (or not: in-process workers claim
//! alongside). It prints one line on stdout once it runs, `worker ID
//! running`, stops on SIGINT or SIGTERM (a batch in flight is redelivered
//! after the claim timeout, and skipped by the consumer), and with
//! `--fault worker-crash-before-ack` aborts, with no cleanup, right after
//! a receipt commits.

use std::io::Write;
use std::sync::Arc;

use crate::cli::worker::WorkerArgs;
use crate::cli::DatabaseUrl;
use crate::outbox::faults::{Countdown, DeliveryFaults, NoFaults};
use crate::outbox::relay::Worker;
use crate::outbox::storage::OutboxStorage;
use crate::store::postgres::PgStore;
use crate::store::sqlite::SqliteStore;
use crate::store::Timing;

/// Runs the worker until a signal (`Ok`) or a crash fault (abort).
pub async fn run(args: WorkerArgs) -> Result<(), String> {
    let cfg = args.outbox.config()?;
    // The key settings are the server's business; a worker never reads keys.
    let timing = Timing::default();
    let (storage, db): (Arc<dyn OutboxStorage>, String) = match args.database() {
        DatabaseUrl::Sqlite(path) => (
            Arc::new(SqliteStore::open(&path, timing)?),
            path.display().to_string(),
        ),
        DatabaseUrl::Postgres(url) => (Arc::new(PgStore::connect(&url, timing).await?), url),
    };
    let faults: Arc<dyn DeliveryFaults> = match Countdown::from_args(&args.faults) {
        Some(c) => {
            tracing::warn!(fault = ?args.faults.fault, "worker faults on: for tests only");
            Arc::new(c)
        }
        None => Arc::new(NoFaults),
    };
    let worker = Worker::new(storage, faults, cfg.clone());
    tracing::info!(worker = worker.id(), db = %db, claim_timeout = ?cfg.claim_timeout,
        retention = ?cfg.retention, "receipt worker started");
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "worker {} running", worker.id())
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
    }
    tokio::select! {
        crashed = worker.run() => {
            tracing::error!(worker = crashed.worker, event = crashed.event_id,
                "fault worker-crash-before-ack: exiting hard, before the ack");
            std::process::abort();
        }
        () = crate::shutdown::signal() => {
            tracing::info!(worker = worker.id(), "receipt worker stopped");
            Ok(())
        }
    }
}
