//! Where a checkout attempt stands, as the record stores it.

/// Where a checkout attempt stands; persisted in the record as its `as_str()` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A key exists, nothing was sent yet.
    Fresh,
    /// Sent at least once, no final answer yet (the outcome may be unknown).
    Pending,
    /// The server answered 2xx.
    Succeeded,
    /// The server answered a final non-2xx status.
    Failed,
}

impl State {
    /// The JS-visible name: `fresh`, `pending`, `succeeded` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Fresh => "fresh",
            State::Pending => "pending",
            State::Succeeded => "succeeded",
            State::Failed => "failed",
        }
    }

    /// The inverse of [`State::as_str`]; `None` for any other text.
    pub fn parse(s: &str) -> Option<State> {
        Some(match s {
            "fresh" => State::Fresh,
            "pending" => State::Pending,
            "succeeded" => State::Succeeded,
            "failed" => State::Failed,
            _ => return None,
        })
    }

    /// Whether a record in this state gives way to another attempt's only once its attempt
    /// ended (`finish()`, `reset()`, another tab's): a pending or a paid one. A failed one
    /// gives way to the next Pay of its order, a fresh one (nothing sent) to any attempt.
    pub fn ends_when_replaced(self) -> bool {
        matches!(self, State::Pending | State::Succeeded)
    }
}
