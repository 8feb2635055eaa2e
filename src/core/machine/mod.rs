//! The client's protocol as a pure state machine, one per scope per page (quinn-proto's
//! and str0m's shape): the page's calls (`open`, `submit`, `reset`, `finish`) and what the
//! browser answers go in as method calls and [`Input`]s; what to do comes out of
//! [`Scope::poll`] as [`Command`]s (take or release the lock, read or write IndexedDB, send
//! a try, wake me later, emit an event, settle a promise, post a notice). It keeps no
//! futures and no callbacks, and does no I/O but through its [`Host`] (clock, randomness
//! and the synchronous Web Storage): the same machine runs in the browser, behind a thin
//! driver, and in the simulator.
//!
//! The rule behind the cross-tab part: only the tab holding the scope's lock changes the
//! stored key or state, and a key a tab made up at `open()` never replaces a record it may
//! not have seen (core::sync holds the decisions). The whole machine is the scope's one
//! owner in the page: every `Checkout` of the scope is a view of it.

mod cached;
mod host;
mod io;
mod jobs;
mod listen;
mod lock;
mod marks;
pub mod mirror;
mod mutation;
mod record_io;
mod scope;
mod state;
mod submit;
mod view;

pub use host::{new_key, random01, Host};
pub use io::{Answer, Command, Event, EventKind, Input, NoAnswer, Reply, Request, Wake};
#[cfg(feature = "sim-mutations")]
pub use mutation::{set_mutation, Mutation};
pub use state::{Scope, Submitted};

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
