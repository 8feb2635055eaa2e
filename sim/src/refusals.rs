//! Web Storage that throws, as browsers make it: localStorage full (the shop's own data
//! filled the origin's quota: `setItem` throws `QuotaExceededError` for a while, reads and
//! removals still work), or storage disabled (cookies and site data blocked: touching
//! `localStorage` throws `SecurityError`, from the page's load on); in either, sessionStorage
//! may refuse the same way (Safari's private mode), leaving page memory.

use idemkey::core::options::StorageKind;

/// How Web Storage refuses in a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StorageFault {
    /// `setItem` throws from `from` until `until` (simulated ms).
    Quota {
        /// From when.
        from: f64,
        /// Until when.
        until: f64,
        /// sessionStorage is full too.
        session: bool,
    },
    /// Every use of localStorage throws, the whole run.
    Disabled {
        /// sessionStorage too.
        session: bool,
    },
}

/// What a use of Web Storage is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// The accessor (`window.localStorage`), `getItem`, `key()`.
    Read,
    /// `setItem`.
    Write,
}

const QUOTA: &str = "QuotaExceededError: The quota has been exceeded.";
const DISABLED: &str = "SecurityError: The operation is insecure.";

impl StorageFault {
    /// The error a `u` of backend `kind` throws at simulated time `now`, if it throws.
    pub fn refuses(self, kind: StorageKind, u: Use, now: f64) -> Option<&'static str> {
        let hit = |session: bool| match kind {
            StorageKind::Local => true,
            StorageKind::Session => session,
            StorageKind::Memory => false,
        };
        match self {
            StorageFault::Quota {
                from,
                until,
                session,
            } => (u == Use::Write && hit(session) && from <= now && now < until).then_some(QUOTA),
            StorageFault::Disabled { session } => hit(session).then_some(DISABLED),
        }
    }
}
