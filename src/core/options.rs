//! `Checkout.open` options: the raw values the glue read from JS, their validation and defaults.
//! Every error names the option by its JS name so the page author knows what to fix.

use crate::core::retry::RetryPolicy;
use crate::error::{Error, Result};

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
        match self {
            StorageKind::Local => "local",
            StorageKind::Session => "session",
            StorageKind::Memory => "memory",
        }
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
        match self {
            HeaderFormat::Plain => "plain",
            HeaderFormat::SfString => "sf-string",
        }
    }

    /// The inverse of [`HeaderFormat::as_str`].
    pub fn parse(s: &str) -> Option<HeaderFormat> {
        match s {
            "plain" => Some(HeaderFormat::Plain),
            "sf-string" => Some(HeaderFormat::SfString),
            _ => None,
        }
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
/// The `namespace` of `Checkout.open` and `sweep()` when none is given.
pub const DEFAULT_NAMESPACE: &str = "idemkey";

impl Options {
    /// Checks every option and fills the defaults of DESIGN.md.
    pub fn validate(raw: RawOptions) -> Result<Options> {
        let scope = raw.scope.ok_or_else(|| bad("scope", "is required"))?;
        let n = scope.encode_utf16().count();
        if n == 0 || n > MAX_SCOPE_LEN {
            return Err(bad("scope", "must be 1 to 200 characters long"));
        }
        let endpoint = raw.endpoint.ok_or_else(|| bad("endpoint", "is required"))?;
        if endpoint.trim().is_empty() {
            return Err(bad("endpoint", "must not be empty"));
        }
        if has_crlf(&endpoint) {
            return Err(bad("endpoint", "must not contain CR, LF or NUL"));
        }
        let method = match raw.method {
            None => "POST".into(),
            Some(m) => {
                let up = m.to_ascii_uppercase();
                if !matches!(up.as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
                    return Err(bad("method", "must be POST, PUT, PATCH or DELETE"));
                }
                up
            }
        };
        let header_name = raw.header_name.unwrap_or_else(|| "Idempotency-Key".into());
        if !is_token(&header_name) {
            return Err(bad(
                "headerName",
                "must be an HTTP header name (token characters only)",
            ));
        }
        let header_format = match raw.header_format {
            None => HeaderFormat::Plain,
            Some(f) => HeaderFormat::parse(&f)
                .ok_or_else(|| bad("headerFormat", "must be \"plain\" or \"sf-string\""))?,
        };
        for (name, value) in &raw.headers {
            if !is_token(name) {
                return Err(bad("headers", "a header name is not an HTTP token"));
            }
            if has_crlf(value) {
                return Err(bad("headers", "a header value contains CR, LF or NUL"));
            }
            // Letting `headers` set the key's header would silently replace the key.
            if name.eq_ignore_ascii_case(&header_name) {
                return Err(bad(
                    "headers",
                    "must not set the idempotency header (use headerName)",
                ));
            }
        }
        let ttl_seconds = int(
            raw.ttl_seconds,
            86_400,
            1,
            31_536_000,
            "ttlSeconds",
            "must be an integer from 1 to 31536000",
        )?;
        let timeout_ms = int(
            raw.timeout_ms,
            10_000,
            1,
            600_000,
            "timeoutMs",
            "must be an integer from 1 to 600000",
        )?;
        let max_retries = int(
            raw.max_retries,
            5,
            0,
            100,
            "maxRetries",
            "must be an integer from 0 to 100",
        )?;
        let backoff_base_ms = int(
            raw.backoff_base_ms,
            250,
            0,
            3_600_000,
            "backoff.baseMs",
            "must be an integer from 0 to 3600000",
        )?;
        let backoff_max_ms = int(
            raw.backoff_max_ms,
            10_000,
            0,
            3_600_000,
            "backoff.maxMs",
            "must be an integer from 0 to 3600000",
        )?;
        if backoff_base_ms > backoff_max_ms {
            return Err(bad("backoff.baseMs", "must not exceed backoff.maxMs"));
        }
        let deadline_ms = int(
            raw.deadline_ms,
            60_000,
            1,
            86_400_000,
            "deadlineMs",
            "must be an integer from 1 to 86400000",
        )?;
        let storage = match raw.storage {
            None => StorageKind::Local,
            Some(s) => StorageKind::parse(&s)
                .ok_or_else(|| bad("storage", "must be \"local\", \"session\" or \"memory\""))?,
        };
        let namespace = raw.namespace.unwrap_or_else(|| DEFAULT_NAMESPACE.into());
        validate_namespace(&namespace)?;
        let credentials = raw.credentials.unwrap_or_else(|| "same-origin".into());
        if !matches!(credentials.as_str(), "omit" | "same-origin" | "include") {
            return Err(bad(
                "credentials",
                "must be \"omit\", \"same-origin\" or \"include\"",
            ));
        }
        Ok(Options {
            scope,
            endpoint,
            method,
            headers: raw.headers,
            header_name,
            header_format,
            ttl_seconds,
            timeout_ms,
            max_retries,
            backoff_base_ms,
            backoff_max_ms,
            deadline_ms,
            storage,
            namespace,
            credentials,
        })
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

/// The `namespace` rule, shared by `Checkout.open` and `sweep()`: 1 to
/// [`MAX_NAMESPACE_LEN`] UTF-16 code units, without `:` (the storage key separator).
pub fn validate_namespace(namespace: &str) -> Result<()> {
    let n = namespace.encode_utf16().count();
    if n == 0 || n > MAX_NAMESPACE_LEN || namespace.contains(':') {
        return Err(bad(
            "namespace",
            "must be 1 to 64 characters long, without ':'",
        ));
    }
    Ok(())
}

fn bad(option: &str, reason: &str) -> Error {
    Error::invalid_option(option, reason)
}

/// A whole number in `min..=max`, or `default` when absent.
fn int(v: Option<f64>, default: u32, min: u32, max: u32, option: &str, range: &str) -> Result<u32> {
    let v = match v {
        None => return Ok(default),
        Some(v) => v,
    };
    if !v.is_finite() {
        return Err(bad(option, "must be a finite number"));
    }
    if v < 0.0 {
        return Err(bad(option, "must not be negative"));
    }
    if v != v.trunc() {
        return Err(bad(option, "must be an integer"));
    }
    if v < min as f64 || v > max as f64 {
        return Err(bad(option, range));
    }
    Ok(v as u32)
}

/// RFC 9110 `token`: what a header name may be made of.
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn has_crlf(s: &str) -> bool {
    s.contains(['\r', '\n', '\0'])
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
