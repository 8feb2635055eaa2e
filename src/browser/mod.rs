//! The browser glue: storage with fallback, fetch with timeout, the cross-tab lock,
//! clock, events, and the submit flow. Thin by design: every decision is in `core`.

pub(crate) mod checkout;
pub(crate) mod clock;
pub(crate) mod events;
pub(crate) mod http;
pub(crate) mod js;
pub(crate) mod lock;
pub(crate) mod options;
pub(crate) mod storage;
pub(crate) mod submit;
