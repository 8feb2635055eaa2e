use super::*;
use crate::core::record::{Record, StoredResponse};
use crate::core::state::State;

const KEY: &str = "8c1a9d5e-0f4b-4c2a-9e3d-7b6a5c4d3e2f";
const FP: &str = "f1:0000000000000001";
const OTHER: &str = "f1:0000000000000002";
const NOW: f64 = 1_700_000_000_000.0;
const TTL: f64 = 86_400_000.0;

fn rec(state: State, fp: Option<&str>) -> Record {
    let mut r = Record::new(KEY, "cart-1", NOW, TTL);
    r.state = state;
    r.fingerprint = fp.map(String::from);
    if state == State::Succeeded || state == State::Failed {
        r.response = Some(StoredResponse {
            status: 201,
            body: "{}".into(),
            replayed: false,
        });
    }
    r
}

const SEND: SubmitPlan = SubmitPlan::Send { new_key: false };
const NEW: SubmitPlan = SubmitPlan::Send { new_key: true };

#[test]
fn names_round_trip() {
    for s in [
        State::Fresh,
        State::Pending,
        State::Succeeded,
        State::Failed,
    ] {
        assert_eq!(State::parse(s.as_str()), Some(s));
    }
    assert_eq!(State::Succeeded.as_str(), "succeeded");
    assert_eq!(State::parse("Fresh"), None);
    assert_eq!(State::parse(""), None);
    assert_eq!(State::parse("done"), None);
}

#[test]
fn every_state_fingerprint_and_expiry_combination() {
    let later = NOW + 1000.0;
    let expired = NOW + TTL;
    // (state, stored fp, expected with same fp, expected with other fp)
    let table = [
        (State::Fresh, None, SEND, SEND),
        (State::Pending, Some(FP), SEND, SubmitPlan::Conflict),
        (
            State::Succeeded,
            Some(FP),
            SubmitPlan::Cached,
            SubmitPlan::Conflict,
        ),
        (State::Failed, Some(FP), NEW, NEW),
    ];
    for (state, stored, same, other) in table {
        let r = rec(state, stored);
        assert_eq!(plan_submit(&r, FP, later), same, "{state:?} same fp");
        assert_eq!(plan_submit(&r, OTHER, later), other, "{state:?} other fp");
        // Expired: always a new attempt, whatever the state and payload.
        assert_eq!(
            plan_submit(&r, FP, expired),
            NEW,
            "{state:?} expired same fp"
        );
        assert_eq!(
            plan_submit(&r, OTHER, expired),
            NEW,
            "{state:?} expired other fp"
        );
        assert_eq!(
            plan_submit(&r, FP, expired + 1e9),
            NEW,
            "{state:?} long expired"
        );
    }
}

#[test]
fn expiry_boundary() {
    let r = rec(State::Succeeded, Some(FP));
    assert_eq!(plan_submit(&r, FP, NOW + TTL - 1.0), SubmitPlan::Cached);
    assert_eq!(plan_submit(&r, FP, NOW + TTL), NEW);
}

#[test]
fn unbound_records() {
    // Nothing bound yet: a pending record without a fingerprint may bind this payload.
    assert_eq!(plan_submit(&rec(State::Pending, None), FP, NOW), SEND);
    // A success without a fingerprint cannot prove the payload is the same: never reuse silently.
    assert_eq!(
        plan_submit(&rec(State::Succeeded, None), FP, NOW),
        SubmitPlan::Conflict
    );
    // A fresh record that somehow carries a fingerprint is still unsent.
    assert_eq!(plan_submit(&rec(State::Fresh, Some(OTHER)), FP, NOW), SEND);
    assert_eq!(plan_submit(&rec(State::Failed, None), FP, NOW), NEW);
}

#[test]
fn a_failure_stored_after_the_call_is_this_submits_answer() {
    let r = rec(State::Failed, Some(FP));
    // Another tab failed this very payload while this submit waited: its answer is ours.
    assert_eq!(plan_submit_since(&r, FP, NOW, false), SubmitPlan::Cached);
    // Another payload: a new attempt, as plan_submit says.
    assert_eq!(plan_submit_since(&r, OTHER, NOW, false), NEW);
    // The failure the page showed when Pay was pressed: the click means "try again".
    assert_eq!(plan_submit_since(&r, FP, NOW, true), NEW);
    // Nothing stored to answer with: plan as usual.
    let mut bare = rec(State::Failed, Some(FP));
    bare.response = None;
    assert_eq!(plan_submit_since(&bare, FP, NOW, false), NEW);
}

#[test]
fn what_the_page_showed_changes_nothing_but_failures() {
    for state in [State::Fresh, State::Pending, State::Succeeded] {
        for stored in [None, Some(FP), Some(OTHER)] {
            let r = rec(state, stored);
            for fp in [FP, OTHER] {
                for (now, seen) in [(NOW, false), (NOW + TTL, true)] {
                    assert_eq!(
                        plan_submit_since(&r, fp, now, seen),
                        plan_submit(&r, fp, now),
                        "{state:?} {stored:?} {fp} {now}"
                    );
                }
            }
        }
    }
}
