//! `idemkey-server`: the reference backend for idemkey.
//!
//! It does the server's half of idempotent requests, carefully: the idempotency
//! key, the charge and the stored response commit in one transaction of its
//! store (SQLite, or PostgreSQL shared by many instances);
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

use idemkey_axum::Idempotency;
use idemkey_server::cli::{Cli, Command, DatabaseUrl, ProviderArgs};
use idemkey_server::faults::Faults;
use idemkey_server::http::provider_service;
use idemkey_server::http::routes::{self as app, AppState};
use idemkey_server::idem::fingerprint::{random_secret, Fingerprinter};
use idemkey_server::idem::phases;
use idemkey_server::outbox::faults::DeliveryFaults;
use idemkey_server::outbox::storage::OutboxStorage;
use idemkey_server::provider::local::Local;
use idemkey_server::provider::remote::Remote;
use idemkey_server::provider::Provider;
use idemkey_server::store::postgres::PgStore;
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
            Some(Command::Worker(args)) => idemkey_server::worker::run(args).await,
            Some(Command::Provider(args)) => run_provider(args).await,
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
    let timing = Timing::new(cli.key_ttl, cli.lock_timeout)
        .map_err(|e| format!("--key-ttl and --lock-timeout: {e}"))?;
    let outbox_cfg = cli.outbox.config()?;
    // One database holds the keys, the charges and the outbox.
    let (store, outbox): (SharedStore, Arc<dyn OutboxStorage>) = match cli.database() {
        DatabaseUrl::Sqlite(path) => {
            let s = Arc::new(SqliteStore::open(&path, timing)?);
            (s.clone(), s)
        }
        DatabaseUrl::Postgres(url) => {
            let s = Arc::new(PgStore::connect(&url, timing).await?);
            (s.clone(), s)
        }
    };
    let provider = match &cli.provider_url {
        Some(url) => Provider::Remote(Remote::new(url)?),
        None => Provider::Local(Local::open(
            &cli.provider_file(),
            Duration::from_millis(cli.provider_latency_ms),
        )?),
    };
    let fingerprints = Fingerprinter::new(&match &cli.fingerprint_secret_file {
        Some(path) => std::fs::read(path)
            .map_err(|e| format!("--fingerprint-secret-file {}: {e}", path.display()))?,
        None => store
            .secret("fingerprint", &random_secret()?)
            .await
            .map_err(|e| format!("cannot read the fingerprint secret: {e}"))?,
    })
    .map_err(|e| match &cli.fingerprint_secret_file {
        Some(path) => format!("--fingerprint-secret-file {}: {e}", path.display()),
        None => e.to_string(),
    })?;
    let state = AppState {
        store: store.clone(),
        provider,
        faults: Arc::new(Faults::new(cli.faults)),
        outbox,
        idem: Idempotency::new(phases::ROUTE, store.shared_keys(), fingerprints.clone())
            .with_replay_cache(cli.replay_cache_entries()?),
        fingerprints,
    };
    let listener = tokio::net::TcpListener::bind(&cli.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cli.addr))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let instance = cli.instance.clone().unwrap_or_else(|| addr.to_string());
    let app = app::router(state.clone(), &cli, &instance)?;

    if !cli.no_receipt_worker {
        let faults: Arc<dyn DeliveryFaults> = state.faults.clone();
        tokio::spawn(outbox::relay::supervise(
            state.outbox.clone(),
            faults,
            outbox_cfg,
        ));
    }
    tokio::spawn(idem::reaper::run(
        state.idem.clone(),
        state.provider.clone(),
        cli.reaper_period(),
    ));
    let store_kind = match cli.database() {
        DatabaseUrl::Sqlite(_) => "sqlite",
        DatabaseUrl::Postgres(_) => "postgres",
    };
    tracing::info!(%addr, instance, store = store_kind, faults = cli.faults, cors = cli.cors,
        key_ttl = ?cli.key_ttl, lock_timeout = ?cli.lock_timeout, "idemkey-server started");
    if cli.faults {
        tracing::warn!("--faults is on: the fault API can break requests on purpose; never use it in production");
    }
    print_listening(addr)?;
    http::accept::serve(
        listener,
        app,
        !cli.faults,
        idemkey_server::shutdown::signal(),
    )
    .await;
    Ok(())
}

/// `idemkey-server provider`: the stand-in as its own service.
async fn run_provider(args: ProviderArgs) -> Result<(), String> {
    let local = Local::open(&args.db, Duration::from_millis(args.latency_ms))?;
    let listener = tokio::net::TcpListener::bind(&args.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    tracing::info!(%addr, db = %args.db.display(), latency_ms = args.latency_ms, "provider started");
    print_listening(addr)?;
    http::accept::serve(
        listener,
        provider_service::router(local),
        true,
        idemkey_server::shutdown::signal(),
    )
    .await;
    Ok(())
}

/// The one line on stdout, once the socket is bound.
fn print_listening(addr: std::net::SocketAddr) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening on http://{addr}")
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}
