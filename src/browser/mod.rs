//! The browser glue: storage with fallback, the cross-tab store (IndexedDB, the Web
//! Storage mirror, BroadcastChannel notices) and lock, fetch with timeout, single flight,
//! clock, events, the submit flow, and the executor its futures run on. Thin by design: every decision is in `core`.

pub(crate) mod broadcast;
pub(crate) mod cell;
pub(crate) mod checkout;
pub(crate) mod clock;
pub(crate) mod events;
pub(crate) mod flight;
pub(crate) mod http;
pub(crate) mod idb;
pub(crate) mod js;
pub(crate) mod key;
pub(crate) mod listen;
pub(crate) mod lock;
pub(crate) mod options;
pub(crate) mod page;
pub(crate) mod record;
pub(crate) mod scopes;
pub(crate) mod shared;
pub(crate) mod storage;
pub(crate) mod submit;
pub(crate) mod sweep;
pub(crate) mod task;
