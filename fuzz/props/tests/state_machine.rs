//! Property test of the client's state machine, built from the pure core the browser glue
//! uses (`plan_submit_since`, `Record`, `fingerprint`, `classify`): any sequence of
//! submits, responses, timeouts, resets, finishes, other tabs' writes and clock steps
//! keeps the client contract, and a pending key is never replaced by a submit of the same
//! payload.

use std::collections::HashMap;

use idemkey::core::fingerprint::fingerprint;
use idemkey::core::plan::{plan_submit_since, SubmitPlan};
use idemkey::core::record::{Record, StoredResponse};
use idemkey::core::retry::{classify, Class};
use idemkey::core::state::State;
use proptest::prelude::*;

const SCOPE: &str = "cart-42";
const TTL: f64 = 60_000.0;

/// Each payload in two spellings (member order differs), which must be one payload.
const PAYLOADS: [[&str; 2]; 3] = [
    [
        r#"{"amount":4200,"currency":"eur"}"#,
        r#"{"currency":"eur","amount":4200}"#,
    ],
    [
        r#"{"amount":999,"currency":"eur","items":[{"a":1,"b":2}]}"#,
        r#"{"items":[{"b":2,"a":1}],"currency":"eur","amount":999}"#,
    ],
    [r#"[1,{"x":null,"y":"z"}]"#, r#"[1,{"y":"z","x":null}]"#],
];

#[derive(Debug, Clone)]
enum Op {
    /// `submit(payload)` in one of its spellings.
    Submit(usize, usize),
    /// The in-flight try gets this status.
    Response(u16),
    /// The in-flight try times out and the submit gives up (`outcome-unknown`).
    Timeout,
    Reset,
    Finish,
    /// Another tab writes the scope's record (or removes it, or writes garbage).
    OtherTab(Other),
    /// The clock moves on.
    Advance(u32),
}

#[derive(Debug, Clone)]
enum Other {
    Reset,
    Finish,
    Pending(usize),
    Done(usize, u16),
    Garbage,
    FutureVersion,
}

fn op() -> impl Strategy<Value = Op> {
    let status = prop::sample::select(vec![200u16, 201, 402, 409, 422, 429, 500, 503]);
    prop_oneof![
        4 => (0..3usize, 0..2usize).prop_map(|(p, s)| Op::Submit(p, s)),
        3 => status.clone().prop_map(Op::Response),
        1 => Just(Op::Timeout),
        1 => Just(Op::Reset),
        1 => Just(Op::Finish),
        2 => prop_oneof![
            Just(Other::Reset),
            Just(Other::Finish),
            (0..3usize).prop_map(Other::Pending),
            (0..3usize, status).prop_map(|(p, s)| Other::Done(p, s)),
            Just(Other::Garbage),
            Just(Other::FutureVersion),
        ]
        .prop_map(Op::OtherTab),
        1 => prop_oneof![1u32..1_000, 50_000u32..100_000].prop_map(Op::Advance),
    ]
}

/// One tab, the origin's storage, and what the test knows about every key.
struct World {
    storage: Option<String>,
    tab: Record,
    now: f64,
    inflight: Option<(String, String)>,
    /// Per key: the payload fingerprint it was bound to and its last final state.
    keys: HashMap<String, (Option<String>, State)>,
    next: u32,
}

impl World {
    fn new() -> World {
        let mut w = World {
            storage: None,
            tab: Record::new(uuid(0), SCOPE, 1_000.0, TTL),
            now: 1_000.0,
            inflight: None,
            keys: HashMap::new(),
            next: 1,
        };
        w.write(&w.tab.clone());
        w
    }

    fn fresh(&mut self) -> Record {
        self.next += 1;
        Record::new(uuid(self.next), SCOPE, self.now, TTL)
    }

    /// What the glue does on every write: encode, store; the text must read back.
    fn write(&mut self, r: &Record) {
        let text = r.encode();
        assert_eq!(
            Record::decode(&text).as_ref(),
            Ok(r),
            "a written record reads back"
        );
        self.storage = Some(text);
    }

    /// What the glue does before a submit: adopt the stored record if it reads.
    fn reload(&mut self) {
        if let Some(r) = self.storage.as_deref().and_then(|t| Record::decode(t).ok()) {
            self.tab = r;
        }
    }

    /// The glue's `persist`: written only while the tab is still on that key.
    fn persist(&mut self, r: &Record) -> bool {
        if self.tab.key != r.key {
            return false;
        }
        self.tab = r.clone();
        self.write(r);
        true
    }

    fn step(&mut self, op: &Op) {
        self.now += 1.0;
        match op {
            Op::Submit(p, spelling) => self.submit(*p, *spelling),
            Op::Response(status) => self.respond(*status),
            Op::Timeout => {
                if let Some((key, _)) = self.inflight.take() {
                    // outcome-unknown: the key is kept, still pending.
                    if self.tab.key == key {
                        assert_eq!(self.tab.state, State::Pending);
                    }
                }
            }
            Op::Reset => {
                self.inflight = None;
                let r = self.fresh();
                self.tab = r.clone();
                self.write(&r);
            }
            Op::Finish => {
                self.inflight = None;
                self.tab = self.fresh();
                self.storage = None;
            }
            Op::OtherTab(o) => {
                // Another tab writes only while it holds the scope's lock, which this tab
                // holds while its own request is in flight.
                if self.inflight.is_none() {
                    self.other_tab(o);
                }
            }
            Op::Advance(ms) => self.now += *ms as f64,
        }
    }

    fn submit(&mut self, p: usize, spelling: usize) {
        let fp = fingerprint(PAYLOADS[p][spelling]).unwrap();
        assert_eq!(
            Ok(&fp),
            fingerprint(PAYLOADS[p][1 - spelling]).as_ref(),
            "key order"
        );
        if let Some((_, f)) = &self.inflight {
            // A double-click shares the flight in progress; nothing new is sent.
            let _ = f;
            return;
        }
        self.reload();
        let before = self.tab.clone();
        let expired = before.is_expired(self.now);
        let same = before.fingerprint.as_deref() == Some(fp.as_str());
        // The tab shows `before`: a failure there is the one the customer tries again after.
        let plan = plan_submit_since(&before, &fp, self.now, true);
        // The contract, state by state.
        match (expired, before.state) {
            (true, _) => assert_eq!(plan, SubmitPlan::Send { new_key: true }),
            (false, State::Fresh) => assert_eq!(plan, SubmitPlan::Send { new_key: false }),
            (false, State::Pending) if same => {
                assert_eq!(
                    plan,
                    SubmitPlan::Send { new_key: false },
                    "pending key replaced"
                )
            }
            (false, State::Pending | State::Succeeded) if !same => {
                assert_eq!(plan, SubmitPlan::Conflict)
            }
            (false, State::Succeeded) => assert_eq!(plan, SubmitPlan::Cached),
            (false, State::Failed) => assert!(matches!(
                plan,
                SubmitPlan::Send { new_key: true } | SubmitPlan::Cached
            )),
            (false, State::Pending) => unreachable!(),
        }
        let mut rec = match plan {
            SubmitPlan::Cached => {
                assert!(before.response.is_some(), "a cached answer exists");
                return;
            }
            SubmitPlan::Conflict => return,
            SubmitPlan::Send { new_key: true } => {
                let r = self.fresh();
                self.tab = r.clone();
                self.write(&r);
                r
            }
            SubmitPlan::Send { new_key: false } => before.clone(),
        };
        if !expired && before.state != State::Failed {
            assert_eq!(rec.key, before.key, "a live key rotated by a submit");
        }
        rec.fingerprint = Some(fp.clone());
        rec.state = State::Pending;
        rec.attempts += 1;
        rec.updated_at = self.now;
        assert!(self.persist(&rec));
        self.bind(&rec.key, &fp, State::Pending);
        self.inflight = Some((rec.key.clone(), fp));
    }

    fn respond(&mut self, status: u16) {
        let Some((key, _)) = self.inflight.clone() else {
            return;
        };
        let mut rec = self.tab.clone();
        if rec.key != key {
            // reset/finish meanwhile: the answer is not stored under the new key.
            self.inflight = None;
            return;
        }
        match classify(status) {
            Class::Retry => {
                rec.attempts += 1;
                rec.updated_at = self.now;
                assert!(
                    self.persist(&rec),
                    "the retry's count is stored before it leaves"
                );
            }
            class => {
                rec.state = if class == Class::Success {
                    State::Succeeded
                } else {
                    State::Failed
                };
                rec.response = Some(StoredResponse {
                    status,
                    body: "{}".into(),
                    replayed: false,
                });
                rec.updated_at = self.now;
                assert!(self.persist(&rec));
                let fp = rec.fingerprint.clone().unwrap();
                self.bind(&rec.key, &fp, rec.state);
                self.inflight = None;
            }
        }
    }

    fn other_tab(&mut self, o: &Other) {
        match o {
            Other::Reset => {
                let r = self.fresh();
                self.write(&r);
            }
            Other::Finish => self.storage = None,
            Other::Pending(p) | Other::Done(p, _) => {
                let fp = fingerprint(PAYLOADS[*p][0]).unwrap();
                let mut r = self.fresh();
                r.fingerprint = Some(fp.clone());
                r.state = State::Pending;
                r.attempts = 1;
                if let Other::Done(_, status) = o {
                    r.state = if classify(*status) == Class::Success {
                        State::Succeeded
                    } else {
                        State::Failed
                    };
                    r.response = Some(StoredResponse {
                        status: *status,
                        body: String::new(),
                        replayed: true,
                    });
                }
                self.bind(&r.key, &fp, r.state);
                self.write(&r);
            }
            Other::Garbage => self.storage = Some("{\"v\":1,\"key\":".into()),
            Other::FutureVersion => {
                let text = self.tab.encode().replacen("{\"v\":1,", "{\"v\":99,", 1);
                assert!(
                    Record::decode(&text).is_err(),
                    "a future record is not read"
                );
                self.storage = Some(text);
            }
        }
    }

    /// Records what a key did; a key never moves to another payload or back from final.
    fn bind(&mut self, key: &str, fp: &str, state: State) {
        let e = self.keys.entry(key.into()).or_insert((None, State::Fresh));
        if let Some(bound) = &e.0 {
            assert_eq!(bound, fp, "key {key} bound to two payloads");
        }
        assert!(
            !(matches!(e.1, State::Succeeded | State::Failed) && state == State::Pending),
            "key {key} sent again after its final answer"
        );
        *e = (Some(fp.into()), state);
    }

    fn invariants(&self) {
        let r = &self.tab;
        assert_eq!(r.expires_at - r.created_at, TTL);
        assert!(r.state == State::Fresh || r.fingerprint.is_some());
        assert_eq!(
            matches!(r.state, State::Succeeded | State::Failed),
            r.response.is_some(),
            "final states and only they hold a response: {r:?}"
        );
        if let Some((key, _)) = &self.inflight {
            assert_eq!(&r.key, key, "a flight outlived its key");
            assert_eq!(r.state, State::Pending);
        }
    }
}

fn uuid(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_keeps_the_contract(ops in prop::collection::vec(op(), 1..60)) {
        let mut w = World::new();
        for op in &ops {
            w.step(op);
            w.invariants();
        }
    }
}
