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

mod app;
mod charges;
mod cli;
mod fault_request;
mod faults;
mod fingerprint;
mod ids;
mod key;
mod keys;
mod ledger;
mod problem;
mod provider;
mod reaper;
mod recovery;
mod request;
mod serve;
mod store;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use crate::app::{AppState, Config};
use crate::cli::Cli;
use crate::faults::Faults;
use crate::provider::Provider;
use crate::store::Store;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr: stdout carries exactly one line, the address.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(cli.log_level)
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
    match rt.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("idemkey-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let store = Store::open(&cli.db, &[provider::SCHEMA])?;
    let provider = Provider::new(
        store.clone(),
        Duration::from_millis(cli.provider_latency_ms),
    );
    let state = AppState {
        store: store.clone(),
        provider,
        faults: Arc::new(Faults::new(cli.faults)),
        cfg: Arc::new(Config {
            key_ttl: cli.key_ttl,
            lock_timeout: cli.lock_timeout,
        }),
    };
    let app = app::router(state.clone(), &cli);
    let listener = tokio::net::TcpListener::bind(&cli.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cli.addr))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;

    tokio::spawn(reaper::run(
        store,
        state.provider.clone(),
        cli.reaper_period(),
        cli.lock_timeout,
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
    serve::serve(listener, app, !cli.faults, serve::shutdown_signal()).await;
    Ok(())
}
