//! What can go wrong in a key store, with the driver's error kept as its
//! source.

/// What caused a [`StoreError`]: the driver's own error, kept as its source.
/// Shared, so that one failed SQLite batch fails every write in it with it.
pub type Cause = std::sync::Arc<dyn std::error::Error + Send + Sync>;

/// What can go wrong in a store; the driver's error, where there is one, is
/// its [`source`](std::error::Error::source).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database cannot be reached or answered too late (down, restarting,
    /// pool exhausted): the operation did not happen and may be retried.
    #[error("database unavailable: {message}")]
    Unavailable {
        /// What happened, for the log.
        message: String,
        /// The driver's error.
        #[source]
        source: Option<Cause>,
    },
    /// The database answered with an error, or held data this code cannot read.
    #[error("database error: {message}")]
    Failed {
        /// What happened, for the log.
        message: String,
        /// The driver's error.
        #[source]
        source: Option<Cause>,
    },
}

impl StoreError {
    /// [`StoreError::Unavailable`] saying `message`, with no source.
    pub fn unavailable(message: impl Into<String>) -> StoreError {
        StoreError::Unavailable {
            message: message.into(),
            source: None,
        }
    }

    /// [`StoreError::Failed`] saying `message`, with no source.
    pub fn failed(message: impl Into<String>) -> StoreError {
        StoreError::Failed {
            message: message.into(),
            source: None,
        }
    }

    /// [`StoreError::Failed`] saying `message`, caused by `source`.
    pub fn failed_by(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Failed {
            message: message.into(),
            source: Some(std::sync::Arc::new(source)),
        }
    }

    /// True when the database could not be reached in time: the operation
    /// did not happen and may be retried.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}
