//! A bounded in-process cache of completed answers, keyed by (principal, key),
//! so a replay or a 422 of a recently completed key needs no database round
//! trip.
//!
//! Why it is safe on many instances: a completed key's stored answer never
//! changes before the key expires. Phase 3 writes it once; only an expired key
//! is rewritten (a new operation under the old key) or reaped. So an answer
//! the store returned as completed may be given again without asking the
//! store until that expiry. The entry's deadline is the expiry the store
//! reported (its own clock), counted from an instant taken *before* the
//! look-up on this host's monotonic clock: it never outlives the row, however
//! far this host's clock is from the database's. Only answers the store
//! returned as completed enter; an in-progress key (409) never does. The
//! route and the fingerprint are checked as the store checks them: the same
//! ones, replay; another, 422.
//!
//! The one other way a completed key leaves the store before its expiry is
//! an application that deletes keys itself, which another instance's cache
//! would not see: such an application turns the cache off.
//!
//! Bounded by entries: two generations of at most half the capacity each;
//! when the current one fills, it becomes the previous one and the oldest
//! generation is dropped. A hit in the previous generation moves the entry to
//! the current one, so keys in use stay (an approximate LRU, O(1) per call).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::model::{KeyRequest, StoredResponse};

/// What the cache can answer for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cached {
    /// The key is completed with this payload: its stored answer.
    Replay(StoredResponse),
    /// The key is completed with another payload: 422.
    KeyReused,
}

struct Entry {
    route: String,
    fingerprint: String,
    response: Arc<StoredResponse>,
    until: Instant,
}

/// The map's key: (principal, key), as a pair, since either may hold any
/// text an application gives it.
type MapKey = (String, String);

#[derive(Default)]
struct Generations {
    current: HashMap<MapKey, Entry>,
    previous: HashMap<MapKey, Entry>,
}

/// The cache; cheap to clone (shared). At most `capacity` entries (one more
/// when it is odd); capacity 0: off, every call a miss.
#[derive(Clone)]
pub struct ReplayCache {
    inner: Option<Arc<Mutex<Generations>>>,
    half: usize,
}

fn map_key(req: &KeyRequest) -> MapKey {
    (req.customer.clone(), req.key.clone())
}

impl ReplayCache {
    /// A cache of at most `capacity` entries (0: off).
    pub fn new(capacity: usize) -> ReplayCache {
        ReplayCache {
            inner: (capacity > 0).then(|| Arc::new(Mutex::new(Generations::default()))),
            half: capacity.div_ceil(2),
        }
    }

    /// The cache that holds nothing.
    #[cfg(test)]
    pub fn off() -> ReplayCache {
        ReplayCache::new(0)
    }

    /// The answer for `req`, if its key is cached as completed and its
    /// deadline has not passed.
    pub fn get(&self, req: &KeyRequest) -> Option<Cached> {
        let inner = self.inner.as_ref()?;
        let mut g = inner.lock().ok()?;
        let k = map_key(req);
        if !g.current.contains_key(&k) {
            let e = g.previous.remove(&k)?;
            self.insert(&mut g, k.clone(), e);
        }
        let entry = g.current.get(&k)?;
        if entry.until <= Instant::now() {
            g.current.remove(&k);
            return None;
        }
        Some(
            if entry.route == req.route && entry.fingerprint == req.fingerprint {
                Cached::Replay(StoredResponse::clone(&entry.response))
            } else {
                Cached::KeyReused
            },
        )
    }

    /// Remembers that the store answered `response` for `req`'s key as
    /// completed in a look-up that began at `asked`, the key expiring
    /// `expires_in` after the store read it.
    pub fn put(
        &self,
        req: &KeyRequest,
        response: &StoredResponse,
        asked: Instant,
        expires_in: Duration,
    ) {
        let Some(inner) = self.inner.as_ref() else {
            return;
        };
        let Some(until) = asked.checked_add(expires_in) else {
            return;
        };
        if let Ok(mut g) = inner.lock() {
            let entry = Entry {
                route: req.route.clone(),
                fingerprint: req.fingerprint.clone(),
                response: Arc::new(response.clone()),
                until,
            };
            self.insert(&mut g, map_key(req), entry);
        }
    }

    fn insert(&self, g: &mut Generations, k: MapKey, e: Entry) {
        g.previous.remove(&k);
        if g.current.len() >= self.half && !g.current.contains_key(&k) {
            g.previous = std::mem::take(&mut g.current);
        }
        g.current.insert(k, e);
    }

    /// Entries held (both generations).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.inner
            .as_ref()
            .and_then(|m| m.lock().ok().map(|g| g.current.len() + g.previous.len()))
            .unwrap_or(0)
    }

    /// True when nothing is held.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(customer: &str, key: &str, fp: &str) -> KeyRequest {
        KeyRequest {
            route: "POST /r".into(),
            customer: customer.into(),
            key: key.into(),
            fingerprint: fp.into(),
        }
    }

    fn resp(body: &str) -> StoredResponse {
        StoredResponse::json(201, body.as_bytes().to_vec())
    }

    const LONG: Duration = Duration::from_secs(3600);

    #[test]
    fn replays_the_same_payload_and_refuses_another() {
        let c = ReplayCache::new(8);
        assert_eq!(c.get(&req("c", "k", "fp")), None);
        c.put(&req("c", "k", "fp"), &resp("a"), Instant::now(), LONG);
        assert_eq!(c.get(&req("c", "k", "fp")), Some(Cached::Replay(resp("a"))));
        assert_eq!(c.get(&req("c", "k", "other")), Some(Cached::KeyReused));
    }

    #[test]
    fn customers_never_meet() {
        let c = ReplayCache::new(8);
        c.put(&req("alice", "k", "fp"), &resp("a"), Instant::now(), LONG);
        assert_eq!(c.get(&req("bob", "k", "fp")), None);
        assert_eq!(c.get(&req("bob", "k", "other")), None);
    }

    #[test]
    fn another_route_is_refused() {
        let c = ReplayCache::new(8);
        c.put(&req("c", "k", "fp"), &resp("a"), Instant::now(), LONG);
        let other = KeyRequest {
            route: "POST /other".into(),
            ..req("c", "k", "fp")
        };
        assert_eq!(c.get(&other), Some(Cached::KeyReused));
    }

    #[test]
    fn two_principals_never_meet_whatever_their_text() {
        // `IdempotencyKey` and the principal are any text an application
        // builds: no separator can be assumed absent from either.
        let c = ReplayCache::new(8);
        c.put(&req("a", "b c", "fp"), &resp("a"), Instant::now(), LONG);
        assert_eq!(c.get(&req("a b", "c", "fp")), None);
        assert_eq!(c.get(&req("a b", "c", "other")), None);
        c.put(&req("x\0", "y", "fp"), &resp("x"), Instant::now(), LONG);
        assert_eq!(c.get(&req("x", "\0y", "fp")), None);
        assert_eq!(
            c.get(&req("a", "b c", "fp")),
            Some(Cached::Replay(resp("a")))
        );
    }

    #[test]
    fn an_entry_dies_at_the_expiry_counted_from_before_the_look_up() {
        let c = ReplayCache::new(8);
        let long_ago = Instant::now() - Duration::from_secs(10);
        // Read 10 s ago with 5 s left: expired 5 s ago.
        c.put(
            &req("c", "k", "fp"),
            &resp("a"),
            long_ago,
            Duration::from_secs(5),
        );
        assert_eq!(c.get(&req("c", "k", "fp")), None);
        assert_eq!(c.get(&req("c", "k", "other")), None);
        c.put(
            &req("c", "k", "fp"),
            &resp("a"),
            Instant::now(),
            Duration::ZERO,
        );
        assert_eq!(c.get(&req("c", "k", "fp")), None);
    }

    #[test]
    fn off_holds_nothing() {
        let c = ReplayCache::off();
        c.put(&req("c", "k", "fp"), &resp("a"), Instant::now(), LONG);
        assert_eq!(c.get(&req("c", "k", "fp")), None);
        assert!(c.is_empty());
    }

    #[test]
    fn bounded_and_keys_in_use_stay() {
        let c = ReplayCache::new(100);
        c.put(&req("c", "hot", "fp"), &resp("h"), Instant::now(), LONG);
        for i in 0..10_000 {
            c.put(
                &req("c", &format!("k{i}"), "fp"),
                &resp("a"),
                Instant::now(),
                LONG,
            );
            assert!(c.len() <= 100, "{} entries", c.len());
            if i % 10 == 0 {
                assert!(
                    c.get(&req("c", "hot", "fp")).is_some(),
                    "hot key evicted at {i}"
                );
            }
        }
        assert!(c.get(&req("c", "k0", "fp")).is_none(), "cold key kept");
        assert!(c.get(&req("c", "k9999", "fp")).is_some());
    }
}
