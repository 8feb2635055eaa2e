//! Command-line flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

pub mod outbox;
pub mod worker;

use self::outbox::OutboxArgs;
use self::worker::WorkerArgs;

/// idemkey reference server: idempotent charges on SQLite, with fault injection.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "idemkey-server",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Another role than the server (no subcommand: the server).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Address to listen on; port 0 picks a free port (the real one is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,

    /// SQLite database file; created (with its directory) on first start.
    /// Shorthand for `--database-url sqlite:FILE`.
    #[arg(long, default_value = "./data/idemkey.db")]
    pub db: PathBuf,

    /// The store: `postgres://USER@HOST:PORT/DB` (shared by many instances)
    /// or `sqlite:PATH`. Without it, SQLite in `--db`.
    #[arg(long, value_name = "URL", conflicts_with = "db", value_parser = parse_database_url)]
    pub database_url: Option<DatabaseUrl>,

    /// Base URL of `idemkey-server provider` (`http://HOST:PORT`); without
    /// it the provider stand-in runs in this process.
    #[arg(long, value_name = "URL")]
    pub provider_url: Option<String>,

    /// SQLite file of the in-process provider stand-in's payments (default:
    /// the SQLite store's file; with PostgreSQL, `provider.db` beside `--db`).
    #[arg(long, value_name = "FILE")]
    pub provider_db: Option<PathBuf>,

    /// Name of this instance, sent in the `Idemkey-Instance` header of every
    /// answer (default: the address it listens on).
    #[arg(long, value_name = "NAME")]
    pub instance: Option<String>,

    /// Serve this directory at `/` (the demo page; `index.html` for directories).
    #[arg(long = "static", value_name = "DIR")]
    pub static_dir: Option<PathBuf>,

    /// Serve this directory at `/pkg/` (the wasm-pack output).
    #[arg(long, value_name = "DIR")]
    pub pkg: Option<PathBuf>,

    /// `Content-Security-Policy` header sent with every file of `--static`
    /// and `--pkg` (the demo serves the strict policy of a payment page).
    #[arg(long, value_name = "POLICY")]
    pub csp: Option<String>,

    /// Enable the fault-injection API, the naive endpoint and ledger reset.
    /// For demos and tests only; never in production.
    #[arg(long)]
    pub faults: bool,

    /// Permissive CORS (any origin, credentials allowed, exposes
    /// Idempotent-Replayed and Retry-After) for cross-origin browser tests.
    #[arg(long)]
    pub cors: bool,

    /// How long a key is remembered: `24h`, `15m`, `2s`, `500ms`, or seconds.
    #[arg(long, default_value = "24h", value_parser = parse_duration)]
    pub key_ttl: Duration,

    /// Age after which an in-progress key whose request died may be taken over.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub lock_timeout: Duration,

    /// Simulated latency of the payment provider stand-in, in milliseconds.
    #[arg(long, default_value_t = 300)]
    pub provider_latency_ms: u64,

    /// How often the reaper deletes expired keys (default: half the key TTL,
    /// between 100ms and 60s).
    #[arg(long, value_parser = parse_duration)]
    pub reaper_interval: Option<Duration>,

    /// Log level for the stderr log: error, warn, info, debug or trace.
    #[arg(long, default_value = "info")]
    pub log_level: tracing::Level,

    /// Completed answers this instance keeps in memory, so replays and 422s
    /// of recent keys skip the database (0: none). Default 10000; off with
    /// `--faults`, whose ledger reset another instance's cache would miss.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub replay_cache: Option<u32>,

    /// File whose bytes (at least 32) key the payload fingerprints
    /// (HMAC-SHA256); give every instance the same file. Without it the key
    /// is a random one kept in the database, shared by every instance on it.
    #[arg(long, value_name = "FILE")]
    pub fingerprint_secret_file: Option<PathBuf>,

    /// Run no receipt worker in this process (run `idemkey-server worker`
    /// beside it instead). Events still go into the outbox.
    #[arg(long)]
    pub no_receipt_worker: bool,

    /// The receipt worker's settings (the in-process one).
    #[command(flatten)]
    pub outbox: OutboxArgs,
}

/// Replay cache entries without `--replay-cache` (and without `--faults`):
/// a few MB at most (a stored answer is under 1 KiB).
pub const REPLAY_CACHE_DEFAULT: usize = 10_000;

/// The roles besides the server.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// The receipt worker as its own process: delivers the outbox's events
    /// to the mailer stand-in until SIGINT or SIGTERM.
    Worker(WorkerArgs),
    /// The payment provider stand-in as its own HTTP service, shared by
    /// instances that point `--provider-url` at it.
    Provider(ProviderArgs),
}

/// Flags of `idemkey-server provider`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProviderArgs {
    /// Address to listen on; port 0 picks a free port (the real one is printed).
    #[arg(long, default_value = "127.0.0.1:8090")]
    pub addr: String,

    /// SQLite file of its payments; created (with its directory) on first start.
    #[arg(long, default_value = "./data/provider.db")]
    pub db: PathBuf,

    /// Time it takes to answer a payment, in milliseconds.
    #[arg(long, default_value_t = 300)]
    pub latency_ms: u64,

    /// Log level for the stderr log.
    #[arg(long, default_value = "info")]
    pub log_level: tracing::Level,
}

/// Where the store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL, as given.
    Postgres(String),
}

/// Parses `postgres://…` / `postgresql://…` or `sqlite:PATH`.
pub fn parse_database_url(s: &str) -> Result<DatabaseUrl, String> {
    if let Some(path) = s.strip_prefix("sqlite:") {
        let path = path.strip_prefix("//").unwrap_or(path);
        if path.is_empty() {
            return Err("sqlite: needs a file path (sqlite:data/idemkey.db)".into());
        }
        return Ok(DatabaseUrl::Sqlite(PathBuf::from(path)));
    }
    if s.starts_with("postgres://") || s.starts_with("postgresql://") {
        return Ok(DatabaseUrl::Postgres(s.to_string()));
    }
    Err(format!(
        "`{s}` is neither postgres://USER@HOST:PORT/DB nor sqlite:PATH"
    ))
}

impl Cli {
    /// The log level of whichever role runs.
    pub fn level(&self) -> tracing::Level {
        match &self.command {
            Some(Command::Worker(w)) => w.log_level,
            Some(Command::Provider(p)) => p.log_level,
            None => self.log_level,
        }
    }

    /// The store to open: `--database-url`, else `--db`.
    pub fn database(&self) -> DatabaseUrl {
        self.database_url
            .clone()
            .unwrap_or_else(|| DatabaseUrl::Sqlite(self.db.clone()))
    }

    /// The in-process provider's SQLite file.
    pub fn provider_file(&self) -> PathBuf {
        match (&self.provider_db, self.database()) {
            (Some(p), _) => p.clone(),
            (None, DatabaseUrl::Sqlite(p)) => p,
            (None, DatabaseUrl::Postgres(_)) => self.db.with_file_name("provider.db"),
        }
    }

    /// Entries of the replay cache: `--replay-cache`, else
    /// [`REPLAY_CACHE_DEFAULT`], else none with `--faults`. A cache beside
    /// `--faults` is refused: `DELETE /api/charges` on one instance removes
    /// completed keys that the caches of the others would still answer.
    pub fn replay_cache_entries(&self) -> Result<usize, String> {
        match (self.replay_cache, self.faults) {
            (Some(n), true) if n > 0 => Err(
                "--replay-cache cannot be used with --faults: the ledger reset deletes completed keys \
                 that another instance's cache would still answer (use --replay-cache 0 or leave it out)"
                    .into(),
            ),
            (Some(n), _) => Ok(n as usize),
            (None, true) => Ok(0),
            (None, false) => Ok(REPLAY_CACHE_DEFAULT),
        }
    }

    /// The reaper period actually used.
    pub fn reaper_period(&self) -> Duration {
        self.reaper_interval.unwrap_or_else(|| {
            (self.key_ttl / 2).clamp(Duration::from_millis(100), Duration::from_secs(60))
        })
    }
}

/// Parses `24h`, `90m`, `2s`, `1.5s`, `500ms`, `7d` or plain seconds (`30`).
/// Zero and negative durations are refused: a zero TTL or lock timeout would
/// disable idempotency without saying so.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit_ms: f64 = match unit.trim() {
        "ms" => 1.0,
        "" | "s" => 1_000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        other => return Err(format!("unknown unit `{other}` (use ms, s, m, h or d)")),
    };
    if num.is_empty() {
        return Err(format!("`{s}` has no number"));
    }
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{num}` is not a number"))?;
    let ms = n * unit_ms;
    if ms.is_nan() || ms < 1.0 {
        return Err("the duration must be at least 1ms".into());
    }
    if ms > 10.0 * 365.0 * 86_400_000.0 {
        return Err("the duration must be at most 10 years".into());
    }
    Ok(Duration::from_millis(ms.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_duration("24h").unwrap(), Duration::from_secs(86_400));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(
            parse_duration("7d").unwrap(),
            Duration::from_secs(7 * 86_400)
        );
        assert_eq!(parse_duration(" 3 s ").unwrap(), Duration::from_secs(3));
    }

    #[test]
    fn refusals() {
        for bad in [
            "",
            "0",
            "0s",
            "0.0001ms",
            "-1s",
            "s",
            "1x",
            "1.2.3s",
            "abc",
            "1e3",
            "99999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from([
            "idemkey-server",
            "--key-ttl",
            "2s",
            "--lock-timeout",
            "500ms",
            "--faults",
        ])
        .unwrap();
        assert_eq!(cli.key_ttl, Duration::from_secs(2));
        assert_eq!(cli.lock_timeout, Duration::from_millis(500));
        assert_eq!(cli.reaper_period(), Duration::from_secs(1));
        assert!(cli.faults && !cli.cors);
        let d = Cli::try_parse_from(["idemkey-server"]).unwrap();
        assert_eq!(d.addr, "127.0.0.1:8080");
        assert_eq!(d.db, PathBuf::from("./data/idemkey.db"));
        assert_eq!(d.key_ttl, Duration::from_secs(86_400));
        assert_eq!(d.lock_timeout, Duration::from_secs(30));
        assert_eq!(d.provider_latency_ms, 300);
        assert_eq!(d.reaper_period(), Duration::from_secs(60));
        assert_eq!(d.replay_cache_entries(), Ok(REPLAY_CACHE_DEFAULT));
        assert_eq!(cli.replay_cache_entries(), Ok(0), "off with --faults");
        assert!(Cli::try_parse_from(["idemkey-server", "--key-ttl", "0"]).is_err());
        assert_eq!(
            d.database(),
            DatabaseUrl::Sqlite("./data/idemkey.db".into())
        );
        assert_eq!(d.provider_file(), PathBuf::from("./data/idemkey.db"));
    }

    #[test]
    fn replay_cache_sizes() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("idemkey-server").chain(args.iter().copied()))
        };
        assert_eq!(
            parse(&["--replay-cache", "5"])
                .unwrap()
                .replay_cache_entries(),
            Ok(5)
        );
        assert_eq!(
            parse(&["--replay-cache", "0"])
                .unwrap()
                .replay_cache_entries(),
            Ok(0)
        );
        let with_faults = parse(&["--replay-cache", "0", "--faults"]).unwrap();
        assert_eq!(with_faults.replay_cache_entries(), Ok(0));
        let refused = parse(&["--replay-cache", "5", "--faults"]).unwrap();
        assert!(refused
            .replay_cache_entries()
            .unwrap_err()
            .contains("--faults"));
        for bad in ["-1", "1000001", "x", ""] {
            assert!(parse(&["--replay-cache", bad]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn database_urls() {
        assert_eq!(
            parse_database_url("sqlite:x/y.db"),
            Ok(DatabaseUrl::Sqlite("x/y.db".into()))
        );
        assert_eq!(
            parse_database_url("sqlite:///tmp/y.db"),
            Ok(DatabaseUrl::Sqlite("/tmp/y.db".into()))
        );
        let pg = "postgres://postgres@127.0.0.1:5432/idemkey";
        assert_eq!(parse_database_url(pg), Ok(DatabaseUrl::Postgres(pg.into())));
        for bad in ["", "sqlite:", "mysql://u@h/db", "/tmp/x.db", "postgres:/x"] {
            assert!(parse_database_url(bad).is_err(), "{bad:?}");
        }
        let cli = Cli::try_parse_from(["idemkey-server", "--database-url", pg]).unwrap();
        assert_eq!(cli.provider_file(), PathBuf::from("./data/provider.db"));
        assert!(
            Cli::try_parse_from(["idemkey-server", "--database-url", pg, "--db", "x.db"]).is_err(),
            "--db and --database-url name the store twice"
        );
    }
}
