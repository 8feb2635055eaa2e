//! Test-only mutations of the machine, for the simulator to show it finds the bugs they put
//! back. Compiled in only with the `sim-mutations` feature, which no shipped build enables:
//! without it [`on`] is a constant `false` and every hook folds away (no bytes in the wasm).
//! The switch is per thread, so parallel tests each run their own.

/// A bug the simulator must find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// `open()` writes its own key as the record (the Web Storage copy) without reading
    /// the stored one under the lock: the old double charge of two tabs.
    OpenWritesOwnKey,
    /// A submit that finds its key pending (outcome unknown) rotates it.
    RotateAfterUnknown,
    /// The lock holder goes on from the Web Storage copy without reading IndexedDB.
    SkipReRead,
    /// `finish()` writes no ended mark (the old bug of a page that navigates right after
    /// it: nothing else makes it durable).
    FinishNoMark,
    /// A submit's order against an end is decided when it takes the lock, not when it was
    /// called (as the wall clock's times of the two decided it before): a submit called
    /// before another tab's `finish()` that takes the lock after it starts a new attempt.
    HeardAtLock,
    /// The ended attempt's answer is not kept for the submits called before the end: they
    /// start a new attempt with a new key.
    DropEndedAnswer,
    /// A tab that shows another tab's payment and reads nothing live at its lock (its
    /// IndexedDB read failed, its localStorage not yet written) starts a new attempt with
    /// a new key, as if the record it shows had been finished.
    ShownReplaced,
    /// `finish()` and `reset()` write their mark without the scope's flag: the pages that
    /// list the scope's marks where the flag is pass over a backend that holds the mark.
    EndWithoutFlag,
    /// A page answers the succeeded attempt it committed from memory without reading the
    /// end marks or the Web Storage copy: another tab's `finish()` or `reset()` of it goes
    /// unheard until its notice comes.
    CommittedUnchecked,
    /// A mark read by its own entry where the scope's flag is gone does not get its flag
    /// back: the pages that list the scope's marks only where the flag is go on passing
    /// over it.
    FlagNotRestored,
    /// The first `open()`'s sweep lists a mark of the scope and does not take it for news:
    /// the page lists the scope's marks only where the flag is.
    SweepIgnoresMarks,
    /// A lock holder whose IndexedDB read failed goes on without the Web Storage copy: it
    /// stores a new key over a record its tab can read, in the decision whose copy the
    /// simulator counts as localStorage's alone.
    FailedReadSkipsCopy,
    /// A submit never sends again a key sent before (by it or an earlier submit): it
    /// rejects `outcome-unknown` where it would resume, as if the key had expired.
    ResumeGivesUp,
    /// A submit does not read the mark of the key its page shows by its own entry: a tab
    /// showing an attempt another tab ended, the scope's flag removed by a script and its
    /// copies of another attempt, counts the end as not heard.
    ShownMarkUnread,
}

#[cfg(feature = "sim-mutations")]
extern crate std;

#[cfg(feature = "sim-mutations")]
std::thread_local! {
    static ACTIVE: core::cell::Cell<Option<Mutation>> = const { core::cell::Cell::new(None) };
}

/// Turns mutation `m` on for this thread (`None`: the machine as shipped).
#[cfg(feature = "sim-mutations")]
pub fn set_mutation(m: Option<Mutation>) {
    ACTIVE.with(|a| a.set(m));
}

/// Whether mutation `m` is on.
#[inline(always)]
pub(super) fn on(m: Mutation) -> bool {
    #[cfg(feature = "sim-mutations")]
    {
        ACTIVE.with(|a| a.get() == Some(m))
    }
    #[cfg(not(feature = "sim-mutations"))]
    {
        let _ = m;
        false
    }
}
