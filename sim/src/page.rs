//! One page of a run (one load of a tab): its scope's machine, the promises of its
//! submits, and what the checks need to know of what it showed, sent and heard.

use std::collections::BTreeMap;

use idemkey::core::machine::{Event, Scope};
use idemkey::error::Error;

use crate::ends::Listing;
use crate::env::PageHost;
use crate::queue::TabId;

/// A scope's machine in a page's registry.
pub(crate) struct Live {
    /// Its instance number (answers to a machine let go are dropped).
    pub inst: u64,
    /// The machine.
    pub m: Scope<PageHost>,
    /// How many `Checkout`s use it.
    pub checkouts: u32,
    /// It asked to hear the channel and `storage` events.
    pub listening: bool,
    /// The record's storage key (the channel name, the `storage` event key).
    pub name: String,
}

/// A submit's promise.
pub(crate) struct Promise {
    /// The order it pays.
    pub order: usize,
    /// When `submit()` was called.
    pub called: f64,
    /// When the Pay it belongs to was pressed: its call, or for a Pay pressed again after
    /// an `outcome-unknown`, that of the submit it resumes (the docs: it resumes that
    /// attempt, even once another tab ended it).
    pub pressed: f64,
    /// Whether the page had heard then (the mark in its localStorage) that each key was
    /// given up: a key given up that it had not heard of answers it as the attempt ended.
    pub heard: String,
    /// What the page could list of the scope's marks then (the flag waivers).
    pub listing: Listing,
    /// How it settled.
    pub settled: Option<Result<String, Error>>,
    /// The key of its last try, if it sent one (a submit that sent nothing left no outcome
    /// unknown, whatever the page's earlier submits sent).
    pub sent: Option<String>,
}

/// A page's last submit, which ended `outcome-unknown`: Pay pressed again pays its order,
/// resumes its attempt, and belongs to what it belonged to.
#[derive(Clone)]
pub(crate) struct UnknownPay {
    /// The order it paid.
    pub order: usize,
    /// When its Pay was pressed.
    pub pressed: f64,
    /// The marks the page had heard then.
    pub heard: String,
    /// What it could list of the scope's marks then.
    pub listing: Listing,
}

/// One page (one load of a tab).
pub(crate) struct Page {
    pub tab: TabId,
    pub alive: bool,
    pub live: Option<Live>,
    /// Commands left before the page dies ("a crash at any step").
    pub crash_left: Option<u32>,
    pub last_event: Option<Event>,
    pub last_state: Option<&'static str>,
    /// The status of the answer being handled.
    pub answered: Option<u16>,
    /// Keys shown when this page called `finish()` or `reset()`, when, and the order it
    /// ended.
    pub ended: Vec<(String, f64, usize)>,
    /// Submit promises by (machine, sequence).
    pub promises: BTreeMap<(u64, u32), Promise>,
    /// The key of the page's last try.
    pub sent_key: Option<String>,
    /// Commands it ran (towards the run's freeze).
    pub commands: u32,
    /// It was restored from the back/forward cache.
    pub restored: bool,
    /// Its last submit, if that ended `outcome-unknown`.
    pub unknown: Option<UnknownPay>,
    /// IndexedDB failed in the page (a `storage-fallback` event from it).
    pub idb_failed: bool,
    /// Keys the page showed bound to a payload (its own, or another tab's it heard of),
    /// each with the run's step and the simulated ms when it first did.
    pub saw_bound: BTreeMap<String, (u64, f64)>,
    /// When its last `storage` event runs (simulated ms): a browser runs a page's events of
    /// one task source in the order they were queued, so a later write's event never runs
    /// before an earlier one's.
    pub storage_event_at: f64,
}

impl Page {
    /// A page just loaded in `tab`, nothing opened yet; `crash_left`: the commands it runs
    /// before it crashes, if it does.
    pub(crate) fn new(tab: TabId, crash_left: Option<u32>) -> Page {
        Page {
            tab,
            alive: true,
            live: None,
            crash_left,
            last_event: None,
            last_state: None,
            answered: None,
            ended: Vec::new(),
            promises: BTreeMap::new(),
            sent_key: None,
            commands: 0,
            restored: false,
            unknown: None,
            idb_failed: false,
            saw_bound: BTreeMap::new(),
            storage_event_at: 0.0,
        }
    }
}
