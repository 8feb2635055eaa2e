//! A pooled connection in a transaction begun by a plain `BEGIN`, for the
//! one-commit mode: its `BEGIN` is sent in the round trip of the statements
//! after it, and its `COMMIT` in the round trip of the statement before it.
//! (The driver's `Transaction` waits for its `BEGIN` alone, and when dropped
//! sends a `ROLLBACK`, since it cannot know that a `COMMIT` sent beside it
//! ran.) Dropped while its transaction may still be open, it closes the
//! connection instead of returning it to the pool: the database then rolls
//! the transaction back, and no later user of the pool finds it open.

use deadpool_postgres::{Client, Object};

use crate::store::StoreResult;

/// A connection whose transaction this crate began.
pub(super) struct Begun {
    /// `Some` until dropped.
    client: Option<Client>,
    /// The transaction may still be open.
    open: bool,
}

impl Begun {
    /// `client`, whose transaction the caller begins by sending `BEGIN` as
    /// its first statement.
    pub(super) fn new(client: Client) -> Begun {
        Begun {
            client: Some(client),
            open: true,
        }
    }

    /// The connection, to run the transaction's statements on.
    pub(super) fn client(&self) -> &Client {
        match &self.client {
            Some(c) => c,
            None => unreachable!("a Begun keeps its client until dropped"),
        }
    }

    /// Ends the transaction with `sql` (`COMMIT` or `ROLLBACK`); the
    /// connection will go back to the pool.
    pub(super) async fn end(&mut self, sql: &str) -> StoreResult<()> {
        self.client().batch_execute(sql).await?;
        self.open = false;
        Ok(())
    }

    /// A statement the caller sent (and saw answered) ended the transaction:
    /// the connection will go back to the pool.
    pub(super) fn ended(&mut self) {
        self.open = false;
    }
}

impl Drop for Begun {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            if self.open {
                // Out of the pool, and dropped: the connection closes.
                drop(Object::take(client));
            }
        }
    }
}
