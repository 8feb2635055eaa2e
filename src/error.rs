//! The crate's one error enum and its `Result` alias; the JS boundary converts it once.
//!
//! The messages are built by [`Error::message`](crate::error::Error::message) with
//! `push_str` (the `Display` impl calls it), so building one runs no `core::fmt` code. (The
//! release wasm links none: its core and alloc are built with panic=immediate-abort, so
//! their panics build no message either.)

use crate::core::json::push_u64;
use crate::prelude::*;

/// Result of every fallible idemkey operation.
pub type Result<T> = core::result::Result<T, Error>;

/// Everything that can go wrong in idemkey, with the stable code JS sees.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// An option passed to `Checkout.open` is missing or out of range.
    #[error("{}", self.message())]
    InvalidOptions {
        /// The option's JS name, e.g. `backoff.baseMs`.
        option: String,
        /// Why the value was rejected.
        reason: String,
    },
    /// A different payload was submitted while the key is pending or succeeded.
    #[error("{}", self.message())]
    PayloadConflict {
        /// The record state that forbids rotating the key.
        state: &'static str,
    },
    /// Retries or the deadline ran out without a final answer from the server, or the
    /// attempt was abandoned (`reset()`, `finish()`, another tab) between two tries.
    #[error("{}", self.message())]
    OutcomeUnknown {
        /// HTTP tries sent for this key so far.
        attempts: u32,
        /// The last try's failure, e.g. `timeout` or `status-503`, or `abandoned`.
        reason: String,
        /// The key was given up on purpose before the next try, so none was sent.
        abandoned: bool,
    },
    /// The payload could not be turned into JSON.
    #[error("{}", self.message())]
    InvalidPayload(String),
    /// A stored record could not be read; it becomes a `storage-corrupt` event, never a throw.
    #[error("{}", self.message())]
    CorruptRecord(String),
}

impl Error {
    /// The stable machine-readable code exposed to JS as `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidOptions { .. } => "invalid-options",
            Error::PayloadConflict { .. } => "payload-conflict",
            Error::OutcomeUnknown { .. } => "outcome-unknown",
            Error::InvalidPayload(_) => "invalid-payload",
            Error::CorruptRecord(_) => "corrupt-record",
        }
    }

    /// The human-readable message (what `Display` prints and JS sees as `error.message`).
    /// `options.js` words the `invalid-options` refusals it finds itself (`readOptions`,
    /// `refused`) the same way: a change here is one there.
    pub fn message(&self) -> String {
        let mut m = String::new();
        match self {
            Error::InvalidOptions { option, reason } => {
                m.push_str("invalid option `");
                m.push_str(option);
                m.push_str("`: ");
                m.push_str(reason);
            }
            Error::PayloadConflict { state } => {
                m.push_str("payload differs from this key's (state ");
                m.push_str(state);
                m.push_str("); call reset() to start a new attempt");
            }
            Error::OutcomeUnknown {
                attempts,
                reason,
                abandoned,
            } => {
                m.push_str("outcome unknown after ");
                push_u64(&mut m, *attempts as u64);
                m.push_str(" tries: ");
                m.push_str(reason);
                // An abandoned attempt says no more than its reason: the next submit of the
                // payload may resume it (called before the end) or start the next one.
                if !*abandoned {
                    m.push_str(if reason == "another-tab" {
                        "; another tab holds this checkout, nothing was sent from here: submit \
                         again later"
                    } else {
                        "; the key is kept, submit again to resume"
                    });
                }
            }
            Error::InvalidPayload(why) => {
                m.push_str("payload is not JSON-serialisable: ");
                m.push_str(why);
            }
            Error::CorruptRecord(why) => {
                m.push_str("stored record unreadable: ");
                m.push_str(why);
            }
        }
        m
    }

    /// Shorthand for an [`Error::InvalidOptions`] naming `option`.
    pub fn invalid_option(option: &str, reason: &str) -> Error {
        Error::InvalidOptions {
            option: option.into(),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        assert_eq!(
            Error::invalid_option("scope", "x").code(),
            "invalid-options"
        );
        assert_eq!(
            Error::PayloadConflict { state: "pending" }.code(),
            "payload-conflict"
        );
        assert_eq!(
            Error::OutcomeUnknown {
                attempts: 3,
                reason: "timeout".into(),
                abandoned: false,
            }
            .code(),
            "outcome-unknown"
        );
        assert_eq!(Error::InvalidPayload("x".into()).code(), "invalid-payload");
        assert_eq!(Error::CorruptRecord("x".into()).code(), "corrupt-record");
    }

    #[test]
    fn messages_name_the_option_and_state() {
        let e = Error::invalid_option("backoff.baseMs", "must be <= backoff.maxMs");
        assert_eq!(
            e.to_string(),
            "invalid option `backoff.baseMs`: must be <= backoff.maxMs"
        );
        let e = Error::PayloadConflict { state: "succeeded" };
        assert!(e.to_string().contains("state succeeded"));
        let e = Error::OutcomeUnknown {
            attempts: 6,
            reason: "status-503".into(),
            abandoned: false,
        };
        assert_eq!(
            e.to_string(),
            "outcome unknown after 6 tries: status-503; the key is kept, submit again to resume"
        );
        let e = Error::OutcomeUnknown {
            attempts: 1,
            reason: "abandoned".into(),
            abandoned: true,
        };
        assert_eq!(e.to_string(), "outcome unknown after 1 tries: abandoned");
    }
}
