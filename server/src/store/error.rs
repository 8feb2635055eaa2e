//! The store's errors: storage terms only, never HTTP ones.

/// What can go wrong in a store.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or answered too late (down, restarting,
    /// pool exhausted): the operation did not happen and may be retried.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The database answered with an error, or held data this code cannot read.
    #[error("database error: {0}")]
    Failed(String),
}

/// Result alias of the store.
pub type StoreResult<T> = Result<T, StoreError>;
