//! The model store of tests/phases_model.rs: the server's `Store` as one in-memory map
//! under one lock, on a clock the test moves, judged by the same `decide` rule as the real
//! stores.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use idemkey_server::idem::fingerprint::Fingerprinter;
use idemkey_server::ids::new_id;
use idemkey_server::store::model::{
    decide, lookup, Charge, Completed, Created, Decision, KeyRequest, KeyRow, Lock, Lookup,
    Outcome, Reserved, StaleKey, StoredResponse,
};
use idemkey_server::store::{KeyStore, Store, StoreResult};

pub const LOCK_MS: i64 = 1_000;

pub fn fingerprints() -> Fingerprinter {
    Fingerprinter::new(&[42; 32]).unwrap()
}
pub const TTL_MS: i64 = 10_000;

#[derive(Debug, Clone)]
pub struct Row {
    route: String,
    fingerprint: String,
    reservation: String,
    pub done: Option<StoredResponse>,
    locked_at: i64,
    expires_at: i64,
    owner: String,
}

impl Row {
    fn key_row(&self) -> KeyRow {
        KeyRow {
            route: self.route.clone(),
            fingerprint: self.fingerprint.clone(),
            reservation: self.reservation.clone(),
            done: self.done.clone(),
            locked_at: self.locked_at,
            expires_at: self.expires_at,
        }
    }
}

/// The model store: one map, one lock, the test's clock; clones share them.
#[derive(Default, Clone)]
pub struct ModelStore {
    pub now: Arc<AtomicI64>,
    pub rows: Arc<Mutex<HashMap<(String, String), Row>>>,
    pub charges: Arc<Mutex<Vec<Charge>>>,
}

impl ModelStore {
    pub fn now(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
    fn judge(&self, req: &KeyRequest) -> (Option<Row>, Decision) {
        let rows = self.rows.lock().unwrap();
        let row = rows.get(&(req.customer.clone(), req.key.clone())).cloned();
        let d = decide(row.as_ref().map(Row::key_row), req, self.now(), LOCK_MS);
        (row, d)
    }
}

#[async_trait]
impl KeyStore<Outcome> for ModelStore {
    async fn lookup(&self, req: &KeyRequest) -> StoreResult<Lookup> {
        let rows = self.rows.lock().unwrap();
        let row = rows.get(&(req.customer.clone(), req.key.clone()));
        Ok(lookup(row.map(Row::key_row), req, self.now(), LOCK_MS))
    }

    async fn reserve(&self, req: &KeyRequest) -> StoreResult<Reserved> {
        let (_, d) = self.judge(req);
        let now = self.now();
        let owner = new_id("own");
        let (reservation, recovered, expires_at) = match d {
            Decision::Replay(r) => return Ok(Reserved::Replay(r)),
            Decision::KeyReused => return Ok(Reserved::KeyReused),
            Decision::InProgress => return Ok(Reserved::InProgress),
            Decision::New => (new_id("op"), false, now + TTL_MS),
            Decision::TakeOver { reservation } => {
                let rows = self.rows.lock().unwrap();
                // A takeover keeps the key one TTL from now at least.
                let exp = rows[&(req.customer.clone(), req.key.clone())].expires_at;
                (reservation, true, exp.max(now + TTL_MS))
            }
        };
        self.rows.lock().unwrap().insert(
            (req.customer.clone(), req.key.clone()),
            Row {
                route: req.route.clone(),
                fingerprint: req.fingerprint.clone(),
                reservation: reservation.clone(),
                done: None,
                locked_at: now,
                expires_at,
                owner: owner.clone(),
            },
        );
        Ok(Reserved::Proceed(Lock {
            reservation,
            owner,
            recovered,
        }))
    }

    async fn complete(
        &self,
        customer: &str,
        key: &str,
        lock: &Lock,
        outcome: Outcome,
    ) -> StoreResult<Completed> {
        let mut rows = self.rows.lock().unwrap();
        let Some(row) = rows.get_mut(&(customer.into(), key.into())) else {
            return Ok(Completed::LockLost);
        };
        if let Some(done) = &row.done {
            return Ok(Completed::AlreadyDone(done.clone()));
        }
        if row.owner != lock.owner {
            return Ok(Completed::LockLost);
        }
        let response = match outcome {
            Outcome::Charge(c) => {
                let r = StoredResponse::created(&c);
                self.charges.lock().unwrap().push(c);
                r
            }
            Outcome::Answer(r) => r,
        };
        row.done = Some(response.clone());
        row.locked_at = 0;
        Ok(Completed::Stored(response))
    }

    async fn release(&self, customer: &str, key: &str, lock: &Lock) -> StoreResult<()> {
        if let Some(row) = self
            .rows
            .lock()
            .unwrap()
            .get_mut(&(customer.into(), key.into()))
        {
            if row.owner == lock.owner && row.done.is_none() {
                row.locked_at = 0;
            }
        }
        Ok(())
    }

    async fn stale_keys(&self, route: &str, limit: usize) -> StoreResult<Vec<StaleKey>> {
        let now = self.now();
        let rows = self.rows.lock().unwrap();
        let mut stale: Vec<(i64, StaleKey)> = rows
            .iter()
            .filter(|(_, r)| r.route == route && r.done.is_none() && r.locked_at + LOCK_MS <= now)
            .map(|((c, k), r)| {
                let s = StaleKey {
                    route: r.route.clone(),
                    principal: c.clone(),
                    key: k.clone(),
                    operation_id: r.reservation.clone(),
                    expired: r.expires_at <= now,
                };
                (r.locked_at, s)
            })
            .collect();
        stale.sort_by_key(|(at, _)| *at);
        Ok(stale.into_iter().take(limit).map(|(_, s)| s).collect())
    }

    async fn take_over(&self, stale: &StaleKey) -> StoreResult<Option<Lock>> {
        let now = self.now();
        let mut rows = self.rows.lock().unwrap();
        let Some(row) = rows.get_mut(&(stale.principal.clone(), stale.key.clone())) else {
            return Ok(None);
        };
        if row.done.is_some()
            || row.reservation != stale.operation_id
            || row.locked_at + LOCK_MS > now
        {
            return Ok(None);
        }
        row.owner = new_id("own");
        row.locked_at = now;
        row.expires_at = row.expires_at.max(now + TTL_MS);
        Ok(Some(Lock {
            reservation: row.reservation.clone(),
            owner: row.owner.clone(),
            recovered: true,
        }))
    }

    async fn forget(&self, stale: &StaleKey, lock: &Lock) -> StoreResult<bool> {
        let mut rows = self.rows.lock().unwrap();
        let k = (stale.principal.clone(), stale.key.clone());
        let ours = rows
            .get(&k)
            .is_some_and(|r| r.owner == lock.owner && r.done.is_none());
        if ours {
            rows.remove(&k);
        }
        Ok(ours)
    }

    async fn reap(&self) -> StoreResult<u64> {
        let now = self.now();
        let mut rows = self.rows.lock().unwrap();
        let before = rows.len();
        // Only done keys expire; an unfinished operation is never reaped.
        rows.retain(|_, r| r.done.is_none() || r.expires_at > now);
        Ok((before - rows.len()) as u64)
    }
}

#[async_trait]
impl Store for ModelStore {
    fn keys(&self) -> &dyn KeyStore<Outcome> {
        self
    }

    fn shared_keys(&self) -> Arc<dyn KeyStore<Outcome>> {
        Arc::new(self.clone())
    }

    async fn insert_charge(&self, charge: &Charge) -> StoreResult<()> {
        self.charges.lock().unwrap().push(charge.clone());
        Ok(())
    }

    async fn charges(&self, customer: &str) -> StoreResult<Vec<Charge>> {
        let all = self.charges.lock().unwrap();
        Ok(all
            .iter()
            .filter(|c| c.customer == customer)
            .cloned()
            .collect())
    }

    async fn delete_customer(&self, customer: &str) -> StoreResult<(u64, u64)> {
        let mut all = self.charges.lock().unwrap();
        let before = all.len();
        all.retain(|c| c.customer != customer);
        Ok(((before - all.len()) as u64, 0))
    }

    async fn secret(&self, _name: &str, candidate: &[u8]) -> StoreResult<Vec<u8>> {
        Ok(candidate.to_vec())
    }
}
