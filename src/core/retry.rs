//! Which answers are retried, and how long to wait before the next try (exponential, full jitter).

use crate::core::json::push_u64;
use crate::prelude::*;

/// What a status means for the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// 2xx: done, state `succeeded`.
    Success,
    /// A final refusal: state `failed`.
    Failure,
    /// Transient: try again with the same key and body.
    Retry,
}

/// Classifies an HTTP status: 2xx success; 408 409 425 429 500 502 503 504 retry; the rest failure.
pub fn classify(status: u16) -> Class {
    match status {
        200..=299 => Class::Success,
        408 | 409 | 425 | 429 | 500 | 502 | 503 | 504 => Class::Retry,
        _ => Class::Failure,
    }
}

/// The retry budget of one `submit()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries after the first.
    pub max_retries: u32,
    /// Backoff base: the cap of the first delay.
    pub base_ms: u32,
    /// Backoff ceiling.
    pub max_ms: u32,
    /// The whole submit's budget, measured from its start.
    pub deadline_ms: u32,
}

/// What to do after a try that may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Sleep `delay_ms`, then try again.
    Retry {
        /// How long to wait.
        delay_ms: u32,
    },
    /// Stop: the outcome is unknown.
    GiveUp,
}

impl RetryPolicy {
    /// The backoff cap before retry number `retries_done + 1`: `min(max_ms, base_ms * 2^retries_done)`.
    pub fn cap_ms(&self, retries_done: u32) -> u32 {
        let grown = if self.base_ms == 0 {
            0
        } else if retries_done >= 32 {
            u64::MAX
        } else {
            (self.base_ms as u64) << retries_done
        };
        grown.min(self.max_ms as u64) as u32
    }

    /// Whether `elapsed_ms` into the submit its budget is used up: no try starts then.
    pub fn out_of_time(&self, elapsed_ms: f64) -> bool {
        elapsed_ms >= self.deadline_ms as f64
    }

    /// Decides the next step after `retries_done` retries, `elapsed_ms` into the submit.
    ///
    /// A server's `Retry-After` is honoured as given rather than jittered; when the wait
    /// (either kind) would reach the deadline, giving up now beats sleeping in vain.
    /// `rand01` is a uniform sample in `[0, 1)`.
    pub fn next(
        &self,
        retries_done: u32,
        elapsed_ms: f64,
        retry_after_ms: Option<u64>,
        rand01: f64,
    ) -> Next {
        if retries_done >= self.max_retries {
            return Next::GiveUp;
        }
        let delay: u64 = match retry_after_ms {
            Some(ra) => ra,
            None => {
                // NaN and out-of-range samples are clamped so the delay stays within the cap.
                let r = if rand01 > 0.0 { rand01.min(1.0) } else { 0.0 };
                (r * self.cap_ms(retries_done) as f64) as u64
            }
        };
        let elapsed = if elapsed_ms > 0.0 { elapsed_ms } else { 0.0 };
        if delay > u32::MAX as u64 || self.out_of_time(elapsed + delay as f64) {
            return Next::GiveUp;
        }
        Next::Retry {
            delay_ms: delay as u32,
        }
    }
}

/// How one HTTP try ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryOutcome {
    /// The server answered with this status.
    Response(u16),
    /// fetch rejected (offline, DNS, connection reset, CORS).
    NetworkError,
    /// No answer within `timeoutMs`; the request was aborted.
    Timeout,
}

impl TryOutcome {
    /// The reason named in `retry` events and `outcome-unknown` errors, e.g. `status-503`.
    pub fn reason(&self) -> String {
        match self {
            TryOutcome::Response(s) => {
                let mut r = String::from("status-");
                push_u64(&mut r, *s as u64);
                r
            }
            TryOutcome::NetworkError => "network-error".into(),
            TryOutcome::Timeout => "timeout".into(),
        }
    }

    /// Whether this outcome may be retried with the same key.
    pub fn is_retryable(&self) -> bool {
        match self {
            TryOutcome::Response(s) => classify(*s) == Class::Retry,
            _ => true,
        }
    }
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
