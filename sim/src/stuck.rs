//! The flag waivers' conditions as the world sees them: what a page could list of the
//! scope's marks at a moment ([`crate::ends::Listing`]), and whether the run's final submit,
//! rejected `outcome-unknown` (reason `abandoned`) with nothing sent, is the case the docs
//! admit where localStorage is full ([`Waiver::FlagStuck`]).

use idemkey::core::options::StorageKind;
use idemkey::core::record::Record;
use idemkey::error::Error;

use crate::ends::Listing;
use crate::page::Promise;
use crate::queue::PageId;
use crate::refusals::Use;
use crate::waiver::Waiver;
use crate::world::World;

impl World {
    /// What `page` could list of the scope's marks now.
    pub(crate) fn listing(&self, page: PageId) -> Listing {
        let e = self.env.borrow();
        let in_view = e.local.get(page, e.ends.flag()).is_some();
        e.ends.listing(page, in_view)
    }

    /// [`Waiver::FlagStuck`] for the final submit `pr` that settled with `e`, if it was
    /// rejected `abandoned` with nothing sent, IndexedDB held the record of an attempt given
    /// up (durably) for an earlier order, and that attempt's mark was in the page's
    /// localStorage at the call: bounded by what the page could list then, localStorage's
    /// refusal of writes then, and the ended key's expiry.
    pub(crate) fn flag_stuck(&self, pr: &Promise, e: &Error) -> Option<Waiver> {
        // (Its `attempts` are the ended attempt's tries, not its own.)
        let Error::OutcomeUnknown {
            reason,
            abandoned: true,
            ..
        } = e
        else {
            return None;
        };
        if reason != "abandoned" || pr.sent.is_some() {
            return None;
        }
        let rec_key = idemkey::core::record::record_key(&self.opts.namespace, &self.opts.scope);
        let r = Record::decode(self.idb.get(&rec_key)?).ok()?;
        let g = self.check.dead(&r.key, pr.order).filter(|g| g.durable)?;
        let heard = pr
            .heard
            .lines()
            .filter_map(idemkey::core::ended::Mark::decode);
        if !heard.into_iter().any(|m| m.key == g.key) {
            return None;
        }
        let env = self.env.borrow();
        let full = env
            .refusal
            .and_then(|f| f.refuses(StorageKind::Local, Use::Write, pr.called))
            .is_some();
        Some(Waiver::FlagStuck {
            flag_gone: pr.listing.unlisted && pr.listing.flag_removed,
            full,
            left_ms: r.expires_at - env.clock.read(pr.called),
        })
    }
}
