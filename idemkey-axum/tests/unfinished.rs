//! An operation that may have reached the provider is never a new one: a
//! crash then a retry after the key's TTL recovers the first operation under
//! its own operation id; a `Recover` that fails leaves the key to the next
//! tick of the reaper, however old the key is.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use idemkey_axum::StaleKey;
use idemkey_axum::{Recover, RecoverError, Reservation};
use serde_json::json;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_then_a_retry_after_the_ttl_recovers_the_first_operation() {
    for db in both(timing(500, 50)).await {
        let (name, idem, dead) = (db.name, idem(&db), idem(&db));
        // The first request reserved the key, called the provider, and its
        // process died before phase 3.
        let op = proceed(&dead, "alice", "crashed", &json!({ "n": 1 })).await;
        let first = op.operation_id().to_string();
        std::mem::forget(op);
        // The client comes back after the key's TTL.
        tokio::time::sleep(Duration::from_millis(650)).await;
        let retry = idem
            .begin("alice", &key("crashed"), &json!({ "n": 1 }))
            .await;
        let Ok(Reservation::Proceed(op)) = retry else {
            panic!("{name}: the retry proceeds, got {retry:?}")
        };
        assert_eq!(
            op.operation_id(),
            first,
            "{name}: the provider is asked again under the first operation id"
        );
        assert!(op.recovered(), "{name}");
        op.commit(note(&first, "once", false)).await.unwrap();
        assert_eq!((db.count)(), 1, "{name}");
    }
}

/// A provider whose look-up fails until `up` is set; then it says phase 2
/// paid every operation.
struct Flaky {
    up: AtomicBool,
}

#[async_trait]
impl Recover<Note> for Flaky {
    async fn recover(&self, stale: &StaleKey) -> Result<Option<Note>, RecoverError> {
        if !self.up.load(Ordering::SeqCst) {
            return Err("the provider's look-up failed".into());
        }
        Ok(Some(note(&stale.operation_id, "recovered", false)))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_recover_leaves_the_key_for_the_next_tick() {
    for db in both(timing(500, 50)).await {
        let (name, idem, dead) = (db.name, idem(&db), idem(&db));
        let op = proceed(&dead, "alice", "unknown", &json!({})).await;
        std::mem::forget(op);
        // Past the lock timeout and the TTL: recovery's turn, and the reaper's.
        tokio::time::sleep(Duration::from_millis(650)).await;
        let provider = Flaky {
            up: AtomicBool::new(false),
        };
        // One tick of the reaper: recovery (which fails), then deletion.
        assert_eq!(idem.recover_once(&provider).await, 0, "{name}");
        db.store.reap().await.unwrap();
        // The next tick, the provider answers: the payment is recorded.
        provider.up.store(true, Ordering::SeqCst);
        assert_eq!(
            idem.recover_once(&provider).await,
            1,
            "{name}: the key was still there for the next tick"
        );
        assert_eq!((db.count)(), 1, "{name}");
    }
}

/// A provider whose look-up of the key `hung` never answers, and which
/// paid every other operation.
struct OneHangs;

#[async_trait]
impl Recover<Note> for OneHangs {
    async fn recover(&self, stale: &StaleKey) -> Result<Option<Note>, RecoverError> {
        if stale.key == "hung" {
            std::future::pending::<()>().await;
        }
        Ok(Some(note(&stale.operation_id, &stale.key, false)))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hung_look_up_does_not_stall_the_others_and_is_asked_again() {
    for db in both(timing(60_000, 50)).await {
        let name = db.name;
        let idem = idem(&db).with_recovery_timeout(Duration::from_millis(300));
        let dead = common::idem(&db);
        // The hung one is the oldest, so it is listed first.
        for k in ["hung", "a", "b"] {
            std::mem::forget(proceed(&dead, "alice", k, &json!({})).await);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let round = tokio::time::timeout(Duration::from_secs(5), idem.recover_once(&OneHangs));
        assert_eq!(
            round.await.ok(),
            Some(2),
            "{name}: a round ends, with the others done"
        );
        assert_eq!((db.count)(), 2, "{name}");
        // The hung one is still there for the next tick.
        let flaky = Flaky {
            up: AtomicBool::new(true),
        };
        assert_eq!(idem.recover_once(&flaky).await, 1, "{name}");
    }
}

/// A provider that never heard of any operation.
struct NeverHeard;

#[async_trait]
impl Recover<Note> for NeverHeard {
    async fn recover(&self, _: &StaleKey) -> Result<Option<Note>, RecoverError> {
        Ok(None)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_that_never_reached_the_provider_is_kept_until_expiry_then_deleted() {
    for db in both(timing(600, 50)).await {
        let (name, idem, dead) = (db.name, idem(&db), idem(&db));
        std::mem::forget(proceed(&dead, "alice", "never", &json!({ "n": 1 })).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(idem.recover_once(&NeverHeard).await, 0);
        // Before expiry: still the same operation (another payload is 422).
        let other = idem.begin("alice", &key("never"), &json!({ "n": 2 })).await;
        assert!(
            matches!(other, Err(idemkey_axum::Error::KeyReused)),
            "{name}: {other:?}"
        );
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(idem.recover_once(&NeverHeard).await, 0);
        // Resolved and expired: deleted, so the key is a new operation.
        let op = proceed(&idem, "alice", "never", &json!({ "n": 2 })).await;
        assert!(!op.recovered(), "{name}: a new operation");
    }
}
