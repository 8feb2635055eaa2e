//! `Checkout.open` options: the raw values the glue read from JS, their validation and defaults.
//! Every error names the option by its JS name so the page author knows what to fix.

use crate::core::retry::RetryPolicy;
use crate::error::{Error, Result};
use crate::prelude::*;

#[path = "options_text.rs"]
mod text;
pub use text::is_token;
use text::{has_crlf, is_white_space, utf16_len};

/// Where records live (the glue falls back local -> session -> memory on failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    /// `localStorage`: survives refreshes and is shared by tabs.
    Local,
    /// `sessionStorage`: survives refreshes of this tab only.
    Session,
    /// Page memory: lost on refresh.
    Memory,
}

impl StorageKind {
    /// The JS name: `local`, `session` or `memory`.
    pub fn as_str(self) -> &'static str {
        STORAGE_KINDS.values[self as usize]
    }

    /// The inverse of [`StorageKind::as_str`].
    pub fn parse(s: &str) -> Option<StorageKind> {
        Some(match s {
            "local" => StorageKind::Local,
            "session" => StorageKind::Session,
            "memory" => StorageKind::Memory,
            _ => return None,
        })
    }
}

/// How the key is written in its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderFormat {
    /// The bare key (Stripe style).
    Plain,
    /// A quoted RFC 8941 sf-string (IETF idempotency-key draft).
    SfString,
}

impl HeaderFormat {
    /// The JS name: `plain` or `sf-string`.
    pub fn as_str(self) -> &'static str {
        HEADER_FORMATS.values[self as usize]
    }

    /// The inverse of [`HeaderFormat::as_str`].
    pub fn parse(s: &str) -> Option<HeaderFormat> {
        Some(match s {
            "plain" => HeaderFormat::Plain,
            "sf-string" => HeaderFormat::SfString,
            _ => return None,
        })
    }
}

/// Options as read from JS, before validation; `None` means "not given".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawOptions {
    /// `scope`.
    pub scope: Option<String>,
    /// `endpoint`.
    pub endpoint: Option<String>,
    /// `method`.
    pub method: Option<String>,
    /// `headers`, as name/value pairs.
    pub headers: Vec<(String, String)>,
    /// `headerName`.
    pub header_name: Option<String>,
    /// `headerFormat`.
    pub header_format: Option<String>,
    /// `ttlSeconds`.
    pub ttl_seconds: Option<f64>,
    /// `timeoutMs`.
    pub timeout_ms: Option<f64>,
    /// `maxRetries`.
    pub max_retries: Option<f64>,
    /// `backoff.baseMs`.
    pub backoff_base_ms: Option<f64>,
    /// `backoff.maxMs`.
    pub backoff_max_ms: Option<f64>,
    /// `deadlineMs`.
    pub deadline_ms: Option<f64>,
    /// `storage`.
    pub storage: Option<String>,
    /// `namespace`.
    pub namespace: Option<String>,
    /// `credentials`.
    pub credentials: Option<String>,
}

/// Validated options with defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The logical checkout (1..=200 UTF-16 units).
    pub scope: String,
    /// Where `submit()` sends.
    pub endpoint: String,
    /// `POST`, `PUT`, `PATCH` or `DELETE`, upper case.
    pub method: String,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// The idempotency header's name.
    pub header_name: String,
    /// How the key is written in that header.
    pub header_format: HeaderFormat,
    /// A key older than this is never reused.
    pub ttl_seconds: u32,
    /// Per-try timeout.
    pub timeout_ms: u32,
    /// Tries after the first.
    pub max_retries: u32,
    /// Backoff base.
    pub backoff_base_ms: u32,
    /// Backoff ceiling.
    pub backoff_max_ms: u32,
    /// Whole submit budget.
    pub deadline_ms: u32,
    /// Requested storage.
    pub storage: StorageKind,
    /// Storage key prefix (no `:`).
    pub namespace: String,
    /// fetch `credentials`: `omit`, `same-origin` or `include`.
    pub credentials: String,
}

/// Longest `scope`, in UTF-16 code units (JS `length`).
pub const MAX_SCOPE_LEN: usize = 200;
/// Longest `namespace`, in UTF-16 code units.
pub const MAX_NAMESPACE_LEN: usize = 64;
/// The `namespace` of `Checkout.open` when none is given.
pub const DEFAULT_NAMESPACE: &str = "idemkey";

/// An [`Int`], the words for its range made from the same two numbers (`concat!` writes
/// `31_536_000` as "31536000"), so the message cannot drift from the check.
macro_rules! int_option {
    ($name:literal, $default:literal, $min:literal, $max:literal) => {
        (
            $name,
            $default,
            $min,
            $max,
            concat!("must be an integer from ", $min, " to ", $max),
        )
    };
}

/// The whole-number options.
const INTS: [Int; 6] = [
    int_option!("ttlSeconds", 86_400, 1, 31_536_000),
    int_option!("timeoutMs", 10_000, 1, 600_000),
    int_option!("maxRetries", 5, 0, 100),
    int_option!("backoff.baseMs", 250, 0, 3_600_000),
    int_option!("backoff.maxMs", 10_000, 0, 3_600_000),
    int_option!("deadlineMs", 60_000, 1, 86_400_000),
];

/// A whole-number option: JS name, default, least and greatest value, and why a value
/// outside them is refused.
type Int = (&'static str, u32, u32, u32, &'static str);

/// A [`Choice`], the reason that lists its values made from the same literals.
macro_rules! choice_of {
    ($option:literal: $($value:literal),+) => {
        Choice {
            option: $option,
            values: &[$($value),+],
            refused: concat!("must be one of:", $(" \"", $value, "\""),+),
        }
    };
}

/// An option that is one of a few names (the first one the default).
struct Choice {
    /// Its JS name.
    option: &'static str,
    /// The names, in the order of the enum they stand for, if any.
    values: &'static [&'static str],
    /// Why another value is refused.
    refused: &'static str,
}

const METHODS: Choice = choice_of!("method": "POST", "PUT", "PATCH", "DELETE");
const HEADER_FORMATS: Choice = choice_of!("headerFormat": "plain", "sf-string");
const STORAGE_KINDS: Choice = choice_of!("storage": "local", "session", "memory");
const CREDENTIALS: Choice = choice_of!("credentials": "same-origin", "omit", "include");

impl Options {
    /// Checks every option and fills in the defaults of the options it was not given.
    pub fn validate(raw: &RawOptions) -> Result<Options> {
        Options::from_raw(raw.clone())
    }

    /// [`Options::validate`], the strings kept taken from `raw`, not copied. They are taken
    /// with `Option::take` and `mem::take`, not moved: `raw` stays whole and is dropped in
    /// one piece on every way out, not field by field.
    pub fn from_raw(mut raw: RawOptions) -> Result<Options> {
        // A rule that fails breaks out with the option and the reason (fixed texts, see
        // `INTS` and `Choice`), and the error is made once, below.
        let (option, reason) = 'refused: {
            let Some(scope) = raw.scope.as_deref() else {
                break 'refused ("scope", "is required");
            };
            let n = utf16_len(scope);
            if n == 0 || n > MAX_SCOPE_LEN {
                break 'refused ("scope", "must be 1 to 200 characters long");
            }
            let Some(endpoint) = raw.endpoint.as_deref() else {
                break 'refused ("endpoint", "is required");
            };
            if endpoint.chars().all(is_white_space) {
                break 'refused ("endpoint", "must not be empty");
            }
            if has_crlf(endpoint) {
                break 'refused ("endpoint", "must not contain CR, LF or NUL");
            }
            // `pick` gives the index in the list of names, which are in the enums' order.
            let method = match METHODS.pick(raw.method.as_deref(), true) {
                Ok(i) => METHODS.values[i],
                Err(why) => break 'refused why,
            };
            let header_name = raw.header_name.as_deref().unwrap_or("Idempotency-Key");
            if !is_token(header_name) {
                break 'refused ("headerName", "must be an HTTP token");
            }
            let format = match HEADER_FORMATS.pick(raw.header_format.as_deref(), false) {
                Ok(i) => i,
                Err(why) => break 'refused why,
            };
            let header_format = [HeaderFormat::Plain, HeaderFormat::SfString][format];
            for (name, value) in &raw.headers {
                if !is_token(name) {
                    break 'refused ("headers", "a name is not an HTTP token");
                }
                if has_crlf(value) {
                    break 'refused ("headers", "a value contains CR, LF or NUL");
                }
                // Letting `headers` set the key's header would silently replace the key.
                if name.eq_ignore_ascii_case(header_name) {
                    break 'refused ("headers", "must not set the key's header (headerName)");
                }
            }
            // Borrowed, not copied: six words, not six `Option<f64>`s, on the stack.
            let given = [
                &raw.ttl_seconds,
                &raw.timeout_ms,
                &raw.max_retries,
                &raw.backoff_base_ms,
                &raw.backoff_max_ms,
                &raw.deadline_ms,
            ];
            let mut ints = [0u32; 6];
            // By index: a zip of the three arrays linked an iterator of its own.
            for (i, out) in ints.iter_mut().enumerate() {
                match int(*given[i], &INTS[i]) {
                    Ok(n) => *out = n,
                    Err(why) => break 'refused (INTS[i].0, why),
                }
            }
            let [ttl_seconds, timeout_ms, max_retries, backoff_base_ms, backoff_max_ms, deadline_ms] =
                ints;
            if backoff_base_ms > backoff_max_ms {
                break 'refused ("backoff.baseMs", "must not exceed backoff.maxMs");
            }
            let storage = match STORAGE_KINDS.pick(raw.storage.as_deref(), false) {
                Ok(i) => i,
                Err(why) => break 'refused why,
            };
            let storage = [
                StorageKind::Local,
                StorageKind::Session,
                StorageKind::Memory,
            ][storage];
            let namespace = raw.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
            if !namespace_ok(namespace) {
                break 'refused ("namespace", NAMESPACE_RULE);
            }
            let credentials = match CREDENTIALS.pick(raw.credentials.as_deref(), false) {
                Ok(i) => CREDENTIALS.values[i],
                Err(why) => break 'refused why,
            };
            // Checked above: given, so the strings are moved out of `raw`, not copied.
            let take = |s: &mut Option<String>| s.take().unwrap_or_default();
            return Ok(Options {
                scope: take(&mut raw.scope),
                endpoint: take(&mut raw.endpoint),
                method: method.into(),
                headers: core::mem::take(&mut raw.headers),
                header_name: header_name.into(),
                header_format,
                ttl_seconds,
                timeout_ms,
                max_retries,
                backoff_base_ms,
                backoff_max_ms,
                deadline_ms,
                storage,
                namespace: namespace.into(),
                credentials: credentials.into(),
            });
        };
        Err(Error::invalid_option(option, reason))
    }

    /// The key lifetime in ms, as records store it.
    pub fn ttl_ms(&self) -> f64 {
        self.ttl_seconds as f64 * 1000.0
    }

    /// The retry budget these options describe.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            base_ms: self.backoff_base_ms,
            max_ms: self.backoff_max_ms,
            deadline_ms: self.deadline_ms,
        }
    }
}

/// Why a `namespace` is refused.
const NAMESPACE_RULE: &str = "must be 1 to 64 characters long, without ':'";

/// Whether `namespace` is 1 to [`MAX_NAMESPACE_LEN`] UTF-16 code units long, without `:`
/// (the storage key separator).
// Not `contains(&b':')`: that links the slice `memchr`, 0.16 KiB more gzipped wasm.
#[allow(clippy::manual_contains)]
fn namespace_ok(namespace: &str) -> bool {
    let n = utf16_len(namespace);
    n != 0 && n <= MAX_NAMESPACE_LEN && !namespace.as_bytes().iter().any(|&b| b == b':')
}

impl Choice {
    /// Which of the values `v` is (in any ASCII case with `any_case`); 0, the default,
    /// when absent. (The index, not the name: the callers that want an enum pick it by
    /// index instead of comparing the text again.)
    fn pick(&self, v: Option<&str>, any_case: bool) -> core::result::Result<usize, Refusal> {
        let Some(v) = v else { return Ok(0) };
        let same = |a: &&str| *a == v || any_case && a.eq_ignore_ascii_case(v);
        self.values
            .iter()
            .position(same)
            .ok_or((self.option, self.refused))
    }
}

/// An option refused: its JS name and why.
type Refusal = (&'static str, &'static str);

/// A whole number in `min..=max` (`spec`: name, default, min, max, and the words for that
/// range), or the default when absent; else why it is refused.
fn int(v: Option<f64>, &(_, default, min, max, range): &Int) -> core::result::Result<u32, &str> {
    let Some(v) = v else { return Ok(default) };
    Err(if !v.is_finite() {
        "must be a finite number"
    } else if v < 0.0 {
        "must not be negative"
    } else if v < min as f64 || v > max as f64 {
        range
    } else if v != (v as u32) as f64 {
        // In range, so `as u32` truncates without saturating: equal only for a whole number.
        "must be an integer"
    } else {
        return Ok(v as u32);
    })
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
