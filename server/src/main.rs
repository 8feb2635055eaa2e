//! `idemkey-server`: the reference backend for idemkey.
//!
//! It does the server's half of idempotent requests, carefully: the idempotency
//! key, the charge and the stored response commit in one SQLite transaction;
//! a repeated key gets the stored answer byte for byte; a key still running
//! gets 409, a key reused with another payload 422; the payment provider is
//! called outside the transaction with the same key and deduplicates on it; a
//! request that dies between phases is recovered by the next try once its lock
//! is older than `--lock-timeout`. See `server/README.md`.
#![deny(missing_docs)]

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use idemkey_server::cli::{Cli, Command};
use idemkey_server::faults::Faults;
use idemkey_server::http::routes::{self as app, AppState};
use idemkey_server::outbox::faults::DeliveryFaults;
use idemkey_server::outbox::storage::OutboxStorage;
use idemkey_server::provider::local::Local;
use idemkey_server::provider::Provider;
use idemkey_server::store::sqlite::SqliteStore;
use idemkey_server::store::{SharedStore, Timing};
use idemkey_server::{http, idem, outbox};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr: stdout carries exactly one line, the address.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(cli.level())
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("idemkey-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let role = async move {
        match cli.command.clone() {
            Some(Command::Worker(args)) => outbox::process::run(args).await,
            None => run(cli).await,
        }
    };
    match rt.block_on(role) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("idemkey-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let timing = Timing {
        key_ttl: cli.key_ttl,
        lock_timeout: cli.lock_timeout,
    };
    let outbox_cfg = cli.outbox.config()?;
    let sqlite = Arc::new(SqliteStore::open(&cli.db, timing)?);
    let store: SharedStore = sqlite.clone();
    let outbox: Arc<dyn OutboxStorage> = sqlite;
    let provider = Provider::Local(Local::open(
        &cli.db,
        Duration::from_millis(cli.provider_latency_ms),
    )?);
    let state = AppState {
        store: store.clone(),
        provider,
        faults: Arc::new(Faults::new(cli.faults)),
        outbox,
    };
    let app = app::router(state.clone(), &cli);
    let listener = tokio::net::TcpListener::bind(&cli.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cli.addr))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;

    if !cli.no_receipt_worker {
        let faults: Arc<dyn DeliveryFaults> = state.faults.clone();
        tokio::spawn(outbox::relay::supervise(
            state.outbox.clone(),
            faults,
            outbox_cfg,
        ));
    }
    tokio::spawn(idem::reaper::run(
        store,
        state.provider.clone(),
        cli.reaper_period(),
    ));
    tracing::info!(%addr, db = %cli.db.display(), faults = cli.faults, cors = cli.cors,
        key_ttl = ?cli.key_ttl, lock_timeout = ?cli.lock_timeout, "idemkey-server started");
    if cli.faults {
        tracing::warn!("--faults is on: the fault API can break requests on purpose; never use it in production");
    }
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}")
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
    }
    http::accept::serve(listener, app, !cli.faults, http::accept::shutdown_signal()).await;
    Ok(())
}
