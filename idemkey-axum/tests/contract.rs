//! What the crate promises an application, on SQLite and on a real
//! PostgreSQL: the application's write and the stored answer commit together
//! or not at all; a failed write leaves the key free for its retry, under the
//! same operation id; replays are byte for byte; another payload is 422; a
//! live key is 409; an expired key is a new operation; recovery commits what
//! the application's `Recover` finds and leaves the rest; one key reserved
//! by many instances at once has one owner.

mod common;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::response::IntoResponse;
use idemkey_axum::postgres::PgKeys;
use idemkey_axum::Fingerprinter;
use idemkey_axum::KeyStore;
use idemkey_axum::StaleKey;
use idemkey_axum::{Error, Idempotency, Recover, RecoverError, Reservation};
use serde_json::json;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_and_the_answer_commit_together_or_not_at_all() {
    for db in both(timing(600_000, 60_000)).await {
        let (name, idem) = (db.name, idem(&db));
        let body = json!({ "text": "hello" });
        let op = proceed(&idem, "alice", "k", &body).await;
        let first = op.operation_id().to_string();
        let failed = op.commit(note(&first, "hello", true)).await;
        assert!(matches!(failed, Err(Error::Store(_))), "{name}: {failed:?}");
        assert_eq!((db.count)(), 0, "{name}: the failed write left nothing");

        // The key was handed back at once: the retry proceeds, same operation.
        let op = proceed(&idem, "alice", "k", &body).await;
        assert_eq!(op.operation_id(), first, "{name}");
        assert!(op.recovered(), "{name}");
        let answer = op.commit(note(&first, "hello", false)).await.unwrap();
        assert_eq!(
            (answer.response.status, answer.replayed),
            (201, false),
            "{name}"
        );
        assert_eq!((db.count)(), 1, "{name}");

        // Replayed byte for byte, with the header, whatever the member order.
        let Ok(Reservation::Answered(replay)) = idem
            .begin("alice", &key("k"), &json!({ "text": "hello" }))
            .await
        else {
            panic!("{name}: a done key is answered");
        };
        assert_eq!(replay.response, answer.response, "{name}");
        let resp = replay.into_response();
        assert_eq!(resp.headers()["idempotent-replayed"], "true", "{name}");
        // Another payload: 422, as a problem document.
        let other = idem
            .begin("alice", &key("k"), &json!({ "text": "bye" }))
            .await;
        let Err(e) = other else {
            panic!("{name}: 422 expected")
        };
        assert!(matches!(e, Error::KeyReused), "{name}");
        let resp = e.into_response();
        assert_eq!(resp.status(), 422);
        assert_eq!(resp.headers()["content-type"], "application/problem+json");
        // Another principal: another key.
        let op = proceed(&idem, "bob", "k", &json!({ "text": "bye" })).await;
        assert_ne!(
            op.operation_id(),
            first,
            "{name}: keys of two principals never meet"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_finds_its_operation_recorded_keeps_nothing() {
    for db in both(timing(600_000, 60_000)).await {
        let (name, idem) = (db.name, idem(&db));
        let op = proceed(&idem, "alice", "dup", &json!({})).await;
        // The application's own row for this operation exists already.
        let other = proceed(&idem, "alice", "other", &json!({})).await;
        let operation = op.operation_id().to_string();
        other
            .commit(note(&operation, "first", false))
            .await
            .unwrap();
        let r = op.commit(note(&operation, "second", false)).await;
        assert!(matches!(r, Err(Error::InProgress)), "{name}: {r:?}");
        assert_eq!((db.count)(), 1, "{name}");
        assert!(
            matches!(
                idem.begin("alice", &key("dup"), &json!({})).await,
                Err(Error::InProgress)
            ),
            "{name}: the key stays in progress, nothing stored"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_key_is_409_with_retry_after_and_a_stale_one_is_taken_over() {
    for db in both(timing(60_000, 300)).await {
        let (name, idem, dead) = (db.name, idem(&db), idem(&db));
        // A process dies between phases: its Operation is never dropped.
        let op = proceed(&dead, "alice", "slow", &json!({})).await;
        let operation = op.operation_id().to_string();
        std::mem::forget(op);
        let busy = idem.begin("alice", &key("slow"), &json!({})).await;
        let Err(e) = busy else {
            panic!("{name}: 409 expected")
        };
        assert!(matches!(e, Error::InProgress), "{name}");
        let resp = e.into_response();
        assert_eq!(resp.status(), 409);
        assert_eq!(resp.headers()["retry-after"], "1");
        tokio::time::sleep(Duration::from_millis(400)).await;
        let op = proceed(&idem, "alice", "slow", &json!({})).await;
        assert_eq!(op.operation_id(), operation, "{name}: the same operation");
        assert!(op.recovered(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_key_is_a_new_operation_and_the_reaper_deletes_it() {
    for db in both(timing(300, 20)).await {
        let (name, idem) = (db.name, idem(&db));
        let op = proceed(&idem, "alice", "old", &json!({ "n": 1 })).await;
        let first = op.operation_id().to_string();
        op.commit(note(&first, "one", false)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let op = proceed(&idem, "alice", "old", &json!({ "n": 2 })).await;
        assert_ne!(op.operation_id(), first, "{name}: a new operation");
        let second = op.operation_id().to_string();
        op.commit(note(&second, "two", false)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(db.store.reap().await.unwrap(), 1, "{name}");
        assert_eq!(
            (db.count)(),
            2,
            "{name}: the application's rows are its own"
        );
    }
}

/// The provider's record: what phase 2 did under each operation id.
struct Paid(Vec<String>);

#[async_trait]
impl Recover<Note> for Paid {
    async fn recover(&self, stale: &StaleKey) -> Result<Option<Note>, RecoverError> {
        Ok(self
            .0
            .contains(&stale.operation_id)
            .then(|| note(&stale.operation_id, "recovered", false)))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_commits_what_phase_2_did_and_leaves_the_rest() {
    for db in both(timing(60_000, 200)).await {
        let (name, idem, dead) = (db.name, idem(&db), idem(&db));
        // Another process ran phase 2 of both, then died.
        let paid = proceed(&dead, "alice", "paid", &json!({})).await;
        let unpaid = proceed(&dead, "alice", "unpaid", &json!({})).await;
        let record = Paid(vec![paid.operation_id().to_string()]);
        std::mem::forget((paid, unpaid));
        assert_eq!(
            idem.recover_once(&record).await,
            0,
            "{name}: locks still live"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(idem.recover_once(&record).await, 1, "{name}");
        assert_eq!((db.count)(), 1, "{name}");
        let Ok(Reservation::Answered(a)) = idem.begin("alice", &key("paid"), &json!({})).await
        else {
            panic!("{name}: recovered, so replayed");
        };
        assert_eq!(
            a.response.body,
            br#"{"note":"recovered"}"#.to_vec(),
            "{name}"
        );
        assert_eq!(idem.recover_once(&record).await, 0, "{name}: once");
        // Nothing was done for the other: it waits for its retry.
        let op = proceed(&idem, "alice", "unpaid", &json!({})).await;
        assert!(op.recovered(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_key_from_many_instances_at_once_has_one_owner() {
    let (db, pool) = postgres_db(timing(600_000, 60_000)).await;
    let instances: Vec<Idempotency<Note>> = (0..4)
        .map(|_| {
            let store: Arc<dyn KeyStore<Note>> =
                Arc::new(PgKeys::new(pool.clone(), timing(600_000, 60_000)));
            Idempotency::new(NOTES_ROUTE, store, Fingerprinter::new(&[9; 32]).unwrap())
        })
        .collect();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let idem = instances[i % 4].clone();
            tokio::spawn(async move {
                match idem.begin("alice", &key("race"), &json!({})).await {
                    Ok(Reservation::Proceed(op)) => {
                        let operation = op.operation_id().to_string();
                        op.commit(note(&operation, "won", false)).await.map(|_| 1)
                    }
                    Ok(Reservation::Answered(_)) | Err(Error::InProgress) => Ok(0),
                    Err(e) => Err(e),
                }
            })
        })
        .collect();
    let mut owners = 0;
    for t in tasks {
        owners += t.await.unwrap().unwrap();
    }
    assert_eq!(owners, 1);
    assert_eq!((db.count)(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_operation_frees_its_key_for_the_retry_at_once() {
    for db in both(timing(600_000, 60_000)).await {
        let (name, idem) = (db.name, idem(&db));
        // axum drops the handler of a client that hung up, mid-phase.
        let op = proceed(&idem, "alice", "gone", &json!({})).await;
        let operation = op.operation_id().to_string();
        drop(op);
        // Freed on a task of its own, at once: long before the lock timeout.
        let freed_by = std::time::Instant::now() + Duration::from_secs(2);
        let retry = loop {
            match idem.begin("alice", &key("gone"), &json!({})).await {
                Err(Error::InProgress) if std::time::Instant::now() < freed_by => {
                    tokio::time::sleep(Duration::from_millis(10)).await
                }
                other => break other,
            }
        };
        let Ok(Reservation::Proceed(op)) = retry else {
            panic!("{name}: the retry proceeds, got {retry:?}")
        };
        assert_eq!(op.operation_id(), operation, "{name}: the same operation");
        op.commit(note(&operation, "once", false)).await.unwrap();
        assert_eq!((db.count)(), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_keeps_the_headers_the_answer_names() {
    use axum::http::{header, HeaderMap, HeaderValue};
    use idemkey_axum::StoredResponse;
    let mut sent = HeaderMap::new();
    sent.insert(header::LOCATION, HeaderValue::from_static("/notes/n1"));
    sent.insert(header::ETAG, HeaderValue::from_static("\"v1\""));
    sent.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    sent.insert(
        header::SET_COOKIE,
        HeaderValue::from_static("session=secret"),
    );
    let stored = StoredResponse::from_parts(201, &sent, b"{}".to_vec())
        .with_header(header::CACHE_CONTROL, &HeaderValue::from_static("no-store"));
    for db in both(timing(600_000, 60_000)).await {
        let (name, idem) = (db.name, idem(&db));
        let op = proceed(&idem, "alice", "located", &json!({})).await;
        let operation = op.operation_id().to_string();
        let first = op
            .commit(note(&operation, "located", false).answering(stored.clone()))
            .await
            .unwrap();
        let Ok(Reservation::Answered(replay)) =
            idem.begin("alice", &key("located"), &json!({})).await
        else {
            panic!("{name}: a replay")
        };
        assert_eq!(replay.response, first.response, "{name}");
        let resp = replay.into_response();
        let h = resp.headers();
        assert_eq!(h["location"], "/notes/n1", "{name}");
        assert_eq!(h["etag"], "\"v1\"", "{name}");
        assert_eq!(h["cache-control"], "no-store", "{name}");
        assert!(h.get("set-cookie").is_none(), "{name}: not named, not kept");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_moves_into_a_spawned_task() {
    for db in both(timing(600_000, 60_000)).await {
        let name = db.name;
        let op = match idem(&db).begin("alice", &key("moved"), &json!({})).await {
            Ok(Reservation::Proceed(op)) => op,
            other => panic!("{name}: {other:?}"),
        };
        // The handler hands phases 2 and 3 to a task of their own, which
        // outlives the `Idempotency` it began with.
        let task = tokio::spawn(async move {
            let operation = op.operation_id().to_string();
            op.commit(note(&operation, "moved", false)).await
        });
        let answer = task.await.unwrap().unwrap();
        assert_eq!(answer.response.status, 201, "{name}");
        assert_eq!((db.count)(), 1, "{name}");
    }
}
