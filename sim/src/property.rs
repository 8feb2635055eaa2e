//! The promises the client makes that the simulator checks, each with the id of the
//! README's or docs' promise it stands for.

/// A promise the client makes, checked by the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    /// The server charges each order at most once.
    OneCharge,
    /// A key whose outcome is unknown is never replaced within its attempt.
    UnknownKept,
    /// Two `Checkout`s of a scope in one page show the same key and state: one machine per
    /// scope in the page's registry, and opening it again changes nothing it shows.
    OneViewPerPage,
    /// The key a page shows is the key it sends.
    ShownIsSent,
    /// A finished (or reset) attempt never answers a later submit of that page, and no
    /// `open()` in that page shows it again.
    FinishedStaysFinished,
    /// The same order's payload never goes out under two keys within one attempt.
    OnePayloadOneKey,
    /// Every submit settles (answer or typed error), once; a later one resumes.
    EverySubmitSettles,
    /// No lock is held (or waited for) by a page that is gone, or held with nothing to do.
    NoLockLeft,
    /// Events report what happened, in order.
    EventsInOrder,
    /// A key the server has forgotten is never sent again.
    ForgottenNotResent,
    /// After `finish()` returned, no later `submit()` anywhere (any tab, any later page)
    /// is answered by the attempt it ended, no try of a later order is sent with its key,
    /// and no later `open()` shows it.
    FinishDurable,
    /// The same for `reset()`.
    ResetDurable,
    /// A page restored from the back/forward cache never sends a key given up elsewhere.
    BfcacheGaveUp,
    /// A submit in a tab that is not frozen and whose timers run on time settles within
    /// its `deadlineMs` and a second, even while another tab holding the lock is frozen.
    WaitBounded,
}

/// Every property.
pub const ALL: [Property; 14] = [
    Property::OneCharge,
    Property::UnknownKept,
    Property::OneViewPerPage,
    Property::ShownIsSent,
    Property::FinishedStaysFinished,
    Property::OnePayloadOneKey,
    Property::EverySubmitSettles,
    Property::NoLockLeft,
    Property::EventsInOrder,
    Property::ForgottenNotResent,
    Property::FinishDurable,
    Property::ResetDurable,
    Property::BfcacheGaveUp,
    Property::WaitBounded,
];

impl Property {
    /// The property of a name.
    /// The property's name as printed.
    pub fn named(name: &str) -> Option<Property> {
        ALL.into_iter().find(|p| p.name() == name)
    }

    /// The property's name as printed.
    pub fn name(self) -> &'static str {
        match self {
            Property::OneCharge => "one-charge-per-attempt",
            Property::UnknownKept => "unknown-key-kept",
            Property::OneViewPerPage => "one-view-per-page",
            Property::ShownIsSent => "shown-key-is-sent",
            Property::FinishedStaysFinished => "finished-stays-finished",
            Property::OnePayloadOneKey => "one-payload-one-key",
            Property::EverySubmitSettles => "every-submit-settles",
            Property::NoLockLeft => "no-lock-left",
            Property::EventsInOrder => "events-in-order",
            Property::ForgottenNotResent => "forgotten-not-resent",
            Property::FinishDurable => "finish-durable",
            Property::ResetDurable => "reset-durable",
            Property::BfcacheGaveUp => "bfcache-gave-up",
            Property::WaitBounded => "wait-bounded",
        }
    }

    /// The README's id of the promise it checks.
    pub fn promise(self) -> &'static str {
        match self {
            Property::OneCharge => "P-double-click-one-charge",
            Property::UnknownKept => "P-outcome-unknown-keeps-key",
            Property::OneViewPerPage => "P-open-same-key",
            Property::ShownIsSent => "P-key-stable",
            Property::FinishedStaysFinished => "P-finish-final",
            Property::OnePayloadOneKey => "P-tabs-one-key",
            Property::EverySubmitSettles => "P-final-resolves",
            Property::NoLockLeft => "P-lock-or-lease",
            Property::EventsInOrder => "P-event-state",
            Property::ForgottenNotResent => "P-ttl-never-reused",
            Property::FinishDurable => "P-finish-durable",
            Property::ResetDurable => "P-reset-durable",
            Property::BfcacheGaveUp => "P-bfcache-gave-up",
            Property::WaitBounded => "P-wait-bounded",
        }
    }
}
