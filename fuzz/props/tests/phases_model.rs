//! Property test of the server's phases (`idem::phases`, `idem::recovery`) over a model
//! store: an in-memory `Store` on a clock the test moves, judged by the same `decide` rule
//! as the real stores. Any sequence of requests (two customers, shared key names, other
//! payloads, declined cards), requests that die between phases, clock steps, recovery and
//! reaping is checked against an independent model of what each answer must be: at most
//! one charge and one payment per operation, replays byte for byte, 409 while a request
//! runs, 422 for another payload, and never one customer's answer for another.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use idemkey_server::http::body::validate_charge;
use idemkey_server::idem::error::IdemError;
use idemkey_server::idem::injected::NoChargeFaults;
use idemkey_server::idem::recovery::FromProvider;
use idemkey_server::idem::{phases, Idempotency, IdempotencyKey};
use idemkey_server::ids::new_id;
use idemkey_server::provider::local::Local;
use idemkey_server::provider::{PaymentRequest, Provider};
use idemkey_server::store::model::{Outcome, Reserved};
use idemkey_server::store::{KeyStore, Store};
use proptest::prelude::*;

mod model_store;

use model_store::{fingerprints, ModelStore, LOCK_MS, TTL_MS};

const CUSTOMERS: [&str; 2] = ["alice", "bob"];
const KEYS: [&str; 2] = ["k-1", "k-2"];
/// Charge bodies: the first two are one payload spelled twice, the last is declined.
const BODIES: [&str; 4] = [
    r#"{"amount":4200,"currency":"eur","items":[{"sku":"tea","qty":2}]}"#,
    r#"{"items":[{"qty":2,"sku":"tea"}],"currency":"eur","amount":4200}"#,
    r#"{"amount":999,"currency":"usd"}"#,
    r#"{"amount":500,"currency":"eur","card":"4000000000000002"}"#,
];

#[derive(Debug, Clone)]
enum Op {
    /// A keyed charge request, run through all phases.
    Request(usize, usize, usize),
    /// A request that reserves the key and dies, before or after the provider paid.
    Dies(usize, usize, usize, bool),
    Advance(i64),
    Recover,
    Reap,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..2usize, 0..2usize, 0..4usize).prop_map(|(c, k, b)| Op::Request(c, k, b)),
        2 => (0..2usize, 0..2usize, 0..4usize, any::<bool>()).prop_map(|(c, k, b, p)| Op::Dies(c, k, b, p)),
        2 => prop_oneof![1i64..500, 900i64..1_200, 9_000i64..12_000].prop_map(Op::Advance),
        1 => Just(Op::Recover),
        1 => Just(Op::Reap),
    ]
}

/// What the model expects of a key: the payload it holds, its operation, its answer.
#[derive(Debug, Clone)]
struct Expect {
    fingerprint: String,
    locked_at: Option<i64>,
    expires_at: i64,
    answer: Option<(u16, Vec<u8>)>,
    paid: bool,
}

struct Run {
    store: Arc<ModelStore>,
    /// The charge route's idempotency on the model store. The model's clock is
    /// not the host's: a cache would count its deadlines on the wrong one.
    idem: Idempotency<Outcome>,
    provider: Provider,
    faults: NoChargeFaults,
    model: HashMap<(usize, usize), Expect>,
    /// Charges the ledger must hold, by customer.
    charged: HashMap<usize, usize>,
    /// Payments (approved or declined) the provider must have made, by customer.
    payments: HashMap<usize, usize>,
}

impl Run {
    fn now(&self) -> i64 {
        self.store.now()
    }

    fn input(b: usize) -> (idemkey_server::idem::input::ChargeInput, String) {
        let v: serde_json::Value = serde_json::from_str(BODIES[b]).unwrap();
        let fp = fingerprints().of(&v);
        (validate_charge(v).unwrap(), fp)
    }

    /// The model's row for a key, if it is still alive at `now` (else forgotten):
    /// only a done key expires; an unfinished operation stays, whatever its age.
    fn live(&mut self, c: usize, k: usize) -> Option<Expect> {
        let now = self.now();
        let e = self.model.get(&(c, k))?.clone();
        if e.answer.is_some() && e.expires_at <= now {
            return None;
        }
        Some(e)
    }

    async fn request(&mut self, c: usize, k: usize, b: usize) {
        let (input, fp) = Run::input(b);
        let declined = input.card.is_some();
        let now = self.now();
        let expect = self.live(c, k);
        let deps = phases::Deps {
            idem: &self.idem,
            provider: &self.provider,
            faults: &self.faults,
        };
        let got = phases::phases(deps, CUSTOMERS[c].into(), KEYS[k].into(), input).await;
        match expect {
            Some(e) if e.fingerprint != fp => {
                assert!(
                    matches!(got, Err(IdemError::KeyReused)),
                    "422 expected: {:?}",
                    got.err()
                )
            }
            Some(Expect {
                answer: Some((status, body)),
                ..
            }) => {
                let a = got.unwrap_or_else(|e| panic!("replay expected, got {e:?}"));
                assert!(a.replayed);
                assert_eq!(
                    (a.response.status, &a.response.body),
                    (status, &body),
                    "byte for byte"
                );
            }
            Some(Expect {
                locked_at: Some(t), ..
            }) if t + LOCK_MS > now => {
                assert!(
                    matches!(got, Err(IdemError::InProgress)),
                    "409 expected: {:?}",
                    got.err()
                )
            }
            other => {
                // A new operation, or one taken over from a request that died.
                let a = got.unwrap_or_else(|e| panic!("a charge expected, got {e:?}"));
                assert!(!a.replayed);
                let status = a.response.status;
                assert_eq!(status, if declined { 402 } else { 201 });
                if status == 201 {
                    let v: serde_json::Value = serde_json::from_slice(&a.response.body).unwrap();
                    assert_eq!(v["customer"], CUSTOMERS[c], "another customer's answer");
                    assert_eq!(v["key"], KEYS[k]);
                    *self.charged.entry(c).or_default() += 1;
                }
                // A taken-over operation whose request already paid is not paid again.
                if !other.as_ref().is_some_and(|e| e.paid) {
                    *self.payments.entry(c).or_default() += 1;
                }
                let expires_at = match &other {
                    Some(e) => e.expires_at.max(now + TTL_MS),
                    None => now + TTL_MS,
                };
                self.model.insert(
                    (c, k),
                    Expect {
                        fingerprint: fp,
                        locked_at: None,
                        expires_at,
                        answer: Some((status, a.response.body)),
                        paid: true,
                    },
                );
            }
        }
    }

    /// Phase 1 and maybe phase 2 of a request that then dies.
    async fn dies(&mut self, c: usize, k: usize, b: usize, after_provider: bool) {
        let (input, fp) = Run::input(b);
        let now = self.now();
        let expect = self.live(c, k);
        let v: serde_json::Value = serde_json::from_str(BODIES[b]).unwrap();
        let req = self
            .idem
            .request(CUSTOMERS[c], &IdempotencyKey(KEYS[k].into()), &v);
        let Reserved::Proceed(lock) = self.store.reserve(&req).await.unwrap() else {
            assert!(expect.is_some(), "refused a key the model does not hold");
            return;
        };
        let taken_over = expect
            .as_ref()
            .is_some_and(|e| e.fingerprint == fp && e.answer.is_none());
        assert!(
            expect.is_none() || taken_over,
            "reserved a key the model holds: {expect:?}"
        );
        let mut paid = taken_over && expect.as_ref().is_some_and(|e| e.paid);
        if after_provider {
            if !paid {
                *self.payments.entry(c).or_default() += 1;
            }
            self.provider
                .pay(PaymentRequest {
                    customer: req.customer,
                    key: req.key,
                    reservation: lock.reservation,
                    amount: input.amount,
                    currency: input.currency,
                    card: input.card,
                })
                .await
                .unwrap();
            paid = true;
        }
        let expires_at = match &expect {
            Some(e) if taken_over => e.expires_at.max(now + TTL_MS),
            _ => now + TTL_MS,
        };
        self.model.insert(
            (c, k),
            Expect {
                fingerprint: fp,
                locked_at: Some(now),
                expires_at,
                answer: None,
                paid,
            },
        );
    }

    async fn recover(&mut self) {
        let done = self
            .idem
            .recover_once(&FromProvider(self.provider.clone()))
            .await;
        // Completed operations are those the provider paid (or declined) whose lock is
        // stale; expired ones it never heard of are deleted.
        let now = self.now();
        let mut expected = 0;
        let mut forgotten = Vec::new();
        for (&(c, k), e) in self.model.iter_mut() {
            let stale = e.answer.is_none() && e.locked_at.is_some_and(|t| t + LOCK_MS <= now);
            if stale && !e.paid && e.expires_at <= now {
                forgotten.push((c, k));
            }
            if stale && e.paid {
                expected += 1;
                let rows = self.store.rows.lock().unwrap();
                let row = &rows[&(CUSTOMERS[c].to_string(), KEYS[k].to_string())];
                let r = row.done.clone().expect("recovery stored the answer");
                if r.status == 201 {
                    *self.charged.entry(c).or_default() += 1;
                }
                e.answer = Some((r.status, r.body));
                e.locked_at = None;
                e.expires_at = e.expires_at.max(now + TTL_MS);
            }
        }
        assert_eq!(done, expected, "recovered operations");
        for ck in forgotten {
            self.model.remove(&ck);
        }
    }

    async fn reap(&mut self) {
        self.store.reap().await.unwrap();
        let keys: Vec<_> = self.model.keys().copied().collect();
        for (c, k) in keys {
            if self.live(c, k).is_none() {
                self.model.remove(&(c, k));
            }
        }
    }

    async fn invariants(&self) {
        for (c, name) in CUSTOMERS.iter().enumerate() {
            let charges = self.store.charges(name).await.unwrap();
            assert_eq!(
                charges.len(),
                *self.charged.get(&c).unwrap_or(&0),
                "charges of {name}"
            );
            let mut ops: Vec<_> = charges.iter().map(|ch| ch.reservation.clone()).collect();
            ops.sort();
            ops.dedup();
            assert_eq!(ops.len(), charges.len(), "an operation charged twice");
            let stats = self.provider.stats(name.to_string()).await.unwrap();
            assert_eq!(
                stats.payments as usize,
                *self.payments.get(&c).unwrap_or(&0),
                "payments of {name}: one per operation"
            );
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn phases_over_a_model_store_keep_the_server_contract(ops in prop::collection::vec(op(), 1..40)) {
        let dir = std::env::temp_dir().join(format!("idemkey-props-{}", new_id("run")));
        std::fs::create_dir_all(&dir).unwrap();
        let provider = Provider::Local(Local::open(&dir.join("provider.db"), Duration::ZERO).unwrap());
        let store = Arc::new(ModelStore::default());
        store.now.store(1_000_000, Ordering::SeqCst);
        let idem = Idempotency::new(phases::ROUTE, store.shared_keys(), fingerprints())
            .with_replay_cache(0);
        let mut run = Run {
            store,
            idem,
            provider,
            faults: NoChargeFaults,
            model: HashMap::new(),
            charged: HashMap::new(),
            payments: HashMap::new(),
        };
        runtime().block_on(async {
            for op in &ops {
                match *op {
                    Op::Request(c, k, b) => run.request(c, k, b).await,
                    Op::Dies(c, k, b, p) => run.dies(c, k, b, p).await,
                    Op::Advance(ms) => { run.store.now.fetch_add(ms, Ordering::SeqCst); }
                    Op::Recover => run.recover().await,
                    Op::Reap => run.reap().await,
                }
                run.invariants().await;
            }
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
