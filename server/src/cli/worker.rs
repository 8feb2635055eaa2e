//! Flags of `idemkey-server worker`.

use std::path::PathBuf;

use clap::Args;

use crate::cli::outbox::OutboxArgs;
use crate::cli::{parse_database_url, DatabaseUrl};
use crate::outbox::faults::WorkerFaultArgs;

/// Flags of `idemkey-server worker`.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// The database the servers use: `postgres://USER@HOST:PORT/DB` or
    /// `sqlite:PATH`.
    #[arg(long, value_name = "URL", value_parser = parse_database_url)]
    pub database_url: Option<DatabaseUrl>,

    /// SQLite database file (the shorthand of `--database-url sqlite:FILE`).
    #[arg(
        long,
        default_value = "./data/idemkey.db",
        conflicts_with = "database_url"
    )]
    pub db: PathBuf,

    /// Log level for the stderr log: error, warn, info, debug or trace.
    #[arg(long, default_value = "info")]
    pub log_level: tracing::Level,

    /// The worker's settings.
    #[command(flatten)]
    pub outbox: OutboxArgs,

    /// Faults for tests.
    #[command(flatten)]
    pub faults: WorkerFaultArgs,
}

impl WorkerArgs {
    /// The store to deliver from.
    pub fn database(&self) -> DatabaseUrl {
        self.database_url
            .clone()
            .unwrap_or_else(|| DatabaseUrl::Sqlite(self.db.clone()))
    }
}
