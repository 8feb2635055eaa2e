//! What the world sees of the scope's ends in Web Storage, apart from what the machines make
//! of it: which pages have listed, read or written a mark of the scope (a page that has done
//! so lists the scope's marks whatever the flag), and whether the scope's flag
//! (`<ns>:ends:<scope>`) is out of localStorage because a script removed it, with no page's
//! write since. The flag waivers ([`crate::waiver::Waiver::FlagGone`] and its kin) ask here.

use std::collections::BTreeSet;

use idemkey::core::record::{ended_key, ends_key};

use crate::ids::PageId;

/// The scope's ends as the world sees them.
pub struct Ends {
    /// The flag's storage key.
    flag: String,
    /// What the key of each mark of the scope starts with (`<ns>:ended:<scope>:`).
    mark_prefix: String,
    /// Pages that listed, read or wrote a mark of the scope, in any backend.
    knows: BTreeSet<PageId>,
    /// The last change to the flag in the origin's localStorage was a script's removal of
    /// it (it was there then).
    script_removed: bool,
    /// A page read a mark of the scope in localStorage by its own entry where its view had
    /// no flag, and localStorage took writes then: the docs have that page write the flag
    /// again, which no page has done since.
    owed: bool,
    /// The marks a page listed at a moment and has not read since: a read of one of them
    /// then is the listing's, not a read by the mark's own entry.
    listing: Option<(PageId, f64, BTreeSet<String>)>,
}

/// What a page could list of the scope's marks at one moment (a submit's call, a try).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Listing {
    /// The page had listed, read or written no mark of the scope (and, for a submit, its
    /// view of localStorage held no mark of the key it showed, which the call reads).
    pub unlisted: bool,
    /// The scope's flag was out of the page's view of localStorage, and the last change to
    /// it there was a script's removal (no page has written it again since), and no page
    /// had found a mark of the scope there without its flag where it could write it again
    /// (the docs have such a page write it).
    pub flag_removed: bool,
}

impl Ends {
    /// The ends of `scope` in `namespace`.
    pub fn new(namespace: &str, scope: &str) -> Ends {
        Ends {
            flag: ends_key(namespace, scope),
            mark_prefix: ended_key(namespace, scope) + ":",
            knows: BTreeSet::new(),
            script_removed: false,
            owed: false,
            listing: None,
        }
    }

    /// The flag's storage key.
    pub fn flag(&self) -> &str {
        &self.flag
    }

    /// Whether storage key `k` is a mark of the scope (not of a scope whose name goes on).
    pub fn is_mark(&self, k: &str) -> bool {
        k.strip_prefix(&self.mark_prefix)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains(':'))
    }

    /// `page` listed `keys` at `now`.
    pub fn listed(&mut self, page: PageId, now: f64, keys: &[String]) {
        let marks = keys.iter().filter(|k| self.is_mark(k)).cloned().collect();
        self.listing = Some((page, now, marks));
    }

    /// Whether `page`'s read of `k` at `now` is of a mark it just listed (taken off the
    /// list: a second read of it is by its own entry).
    pub fn listed_read(&mut self, page: PageId, now: f64, k: &str) -> bool {
        match &mut self.listing {
            Some((p, t, marks)) if *p == page && *t == now => marks.remove(k),
            _ => false,
        }
    }

    /// `page` listed, read or wrote storage key `k`: it knows the scope has ends if `k` is
    /// one of its marks.
    pub fn touched(&mut self, page: PageId, k: &str) {
        if self.is_mark(k) {
            self.knows.insert(page);
        }
    }

    /// A page wrote or removed localStorage's `k`: the flag, if it is, is no longer as a
    /// script left it.
    pub fn wrote_local(&mut self, k: &str) {
        if k == self.flag {
            self.script_removed = false;
            self.owed = false;
        }
    }

    /// A page read localStorage's `k` by its own entry (not as an entry it just listed),
    /// where its view had no flag (`flagless`) and localStorage took writes (`writable`):
    /// if `k` is a mark of the scope, the page owes the flag.
    pub fn read_local(&mut self, k: &str, flagless: bool, writable: bool) {
        if self.is_mark(k) && flagless && writable {
            self.owed = true;
        }
    }

    /// A script removed the flag from localStorage, where it was (`present`).
    pub fn script_removes(&mut self, present: bool) {
        if present {
            self.script_removed = true;
        }
    }

    /// What `page` could list now, `flag_in_view`: whether its view of localStorage holds
    /// the flag. The flag counts as removed only while no page owes it back.
    pub fn listing(&self, page: PageId, flag_in_view: bool) -> Listing {
        Listing {
            unlisted: !self.knows.contains(&page),
            flag_removed: self.script_removed && !self.owed && !flag_in_view,
        }
    }
}
