//! How a PostgreSQL pool and the key store on it are bounded: its size, its
//! waits, the statement timeout the database enforces, the bound on a call.

use std::time::Duration;

use super::{OP_TIMEOUT, POOL_SIZE, STATEMENT_TIMEOUT, WAIT};
use crate::error::Error;

/// How a [`pool`](super::pool) and the [`PgKeys`](super::PgKeys) on it are bounded; [`PgSettings::default`]
/// is [`POOL_SIZE`], [`WAIT`], [`STATEMENT_TIMEOUT`] and [`OP_TIMEOUT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PgSettings {
    /// Most connections the pool opens.
    pub max_connections: usize,
    /// Longest wait for a pooled connection, and to open or check one.
    pub wait: Duration,
    /// Longest a statement runs before the database cancels it (the
    /// server's `statement_timeout`). Migrations are exempt.
    pub statement_timeout: Duration,
    /// Longest a store call may take, as its caller sees it.
    pub op_timeout: Duration,
}

impl Default for PgSettings {
    fn default() -> PgSettings {
        PgSettings {
            max_connections: POOL_SIZE,
            wait: WAIT,
            statement_timeout: STATEMENT_TIMEOUT,
            op_timeout: OP_TIMEOUT,
        }
    }
}

impl PgSettings {
    /// The same with at most `n` connections (at least 1).
    pub fn max_connections(mut self, n: usize) -> PgSettings {
        self.max_connections = n;
        self
    }
    /// The same with waits of `d`.
    pub fn wait(mut self, d: Duration) -> PgSettings {
        self.wait = d;
        self
    }
    /// The same with a statement timeout of `d`.
    pub fn statement_timeout(mut self, d: Duration) -> PgSettings {
        self.statement_timeout = d;
        self
    }
    /// The same with store calls bounded by `d`.
    pub fn op_timeout(mut self, d: Duration) -> PgSettings {
        self.op_timeout = d;
        self
    }

    /// An error naming the setting out of range: no connection, or a time
    /// under 1 ms; a statement timeout longer than the call's own lets a
    /// statement run on after its caller gave up.
    pub(super) fn check(&self) -> Result<(), Error> {
        let bad = |what: &str| {
            Err(Error::InvalidSetting(format!(
                "PostgreSQL settings: {what}"
            )))
        };
        if self.max_connections == 0 {
            return bad("at least one connection");
        }
        for (name, d) in [
            ("wait", self.wait),
            ("statement timeout", self.statement_timeout),
            ("op timeout", self.op_timeout),
        ] {
            if d < Duration::from_millis(1) {
                return bad(&format!("the {name} must be 1 ms at least, not {d:?}"));
            }
        }
        if self.statement_timeout > self.op_timeout {
            return bad("the statement timeout must not be longer than the op timeout");
        }
        Ok(())
    }
}
