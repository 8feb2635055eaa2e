//! The mode for a provider that deduplicates
//! (`Idempotency::provider_deduplicates`), on both stores: a key has no row
//! until its answer commits; while a request holds it, its other requests
//! are 409 whatever their payload; once done, a replay or a 422, on its
//! route only; the operation id is the same for every try of one key,
//! whatever its payload, so a retry after a request that went away is that
//! operation again; on PostgreSQL a key is held no longer than the lock
//! timeout, its connection with it; and a key an unfinished operation of
//! the two-commit mode holds is finished in that mode, under its own
//! operation id.

mod common;

use std::time::{Duration, Instant};

use idemkey_axum::implementers::Lookup;
use idemkey_axum::{Error, Idempotency, Operation, Reservation, StoreError};
use serde_json::json;

use common::*;

fn one_commit(db: &Db, route: &str) -> Idempotency<Note> {
    idem_on(db, route).provider_deduplicates()
}

/// Begins until the key is this request's: a key let go is free at once on
/// SQLite, and on PostgreSQL once the rollback of its transaction ran.
async fn proceed_soon(
    idem: &Idempotency<Note>,
    k: &str,
    body: &serde_json::Value,
) -> Operation<Note> {
    let started = Instant::now();
    loop {
        match idem.begin("alice", &key(k), body).await {
            Ok(Reservation::Proceed(op)) => return op,
            Err(Error::InProgress) if started.elapsed() < Duration::from_secs(1) => {
                tokio::time::sleep(Duration::from_millis(10)).await
            }
            other => panic!("{k}: expected to proceed, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_key_has_no_row_and_its_other_requests_are_409() {
    for db in both(timing(60_000, 1_000)).await {
        let name = db.name;
        let idem = one_commit(&db, NOTES_ROUTE);
        let body = json!({ "amount": 4200 });
        let op = proceed(&idem, "alice", "k", &body).await;
        let req = idem.request("alice", &key("k"), &body);
        assert!(
            matches!(db.store.lookup(&req).await.unwrap(), Lookup::Free),
            "{name}: nothing is written before phase 3"
        );
        for other in [body.clone(), json!({ "amount": 1 })] {
            let busy = idem.begin("alice", &key("k"), &other).await;
            assert!(matches!(busy, Err(Error::InProgress)), "{name}: {busy:?}");
        }
        // Another principal's key of the same text is its own.
        proceed(&idem, "bob", "k", &body).await.release().await;

        let operation = op.operation_id().to_string();
        let answer = op.commit(note(&operation, "paid", false)).await.unwrap();
        assert!(!answer.replayed, "{name}");
        match idem.begin("alice", &key("k"), &body).await {
            Ok(Reservation::Answered(replay)) => {
                assert!(replay.replayed, "{name}");
                assert_eq!(replay.response, answer.response, "{name}");
            }
            other => panic!("{name}: a replay expected, got {other:?}"),
        }
        let reused = idem
            .begin("alice", &key("k"), &json!({ "amount": 1 }))
            .await;
        assert!(
            matches!(reused, Err(Error::KeyReused)),
            "{name}: {reused:?}"
        );
        assert_eq!((db.count)(), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_is_the_same_operation_whatever_its_payload() {
    for db in both(timing(60_000, 1_000)).await {
        let name = db.name;
        let idem = one_commit(&db, NOTES_ROUTE);
        let body = json!({ "amount": 4200 });
        let first = proceed(&idem, "alice", "k", &body).await;
        let operation = first.operation_id().to_string();
        // The request goes away (its client hung up, or its process died
        // after the provider's answer): nothing is stored, and the retry, on
        // another instance as well, is the same operation.
        drop(first);
        let again = proceed_soon(&one_commit(&db, NOTES_ROUTE), "k", &body).await;
        assert_eq!(again.operation_id(), operation, "{name}");
        assert!(!again.recovered(), "{name}");
        again.release().await;
        // A retry with another payload reaches the provider under the same
        // id, which the provider deduplicates (or refuses): never a second
        // payment under an id of its own.
        let other = proceed_soon(&idem, "k", &json!({ "amount": 1 })).await;
        assert_eq!(other.operation_id(), operation, "{name}: another payload");
        let elsewhere = idem_on(&db, "POST /refunds").provider_deduplicates();
        other.release().await;
        let op = proceed_soon(&elsewhere, "k", &body).await;
        assert_ne!(op.operation_id(), operation, "{name}: another route");
        let id = op.operation_id().to_string();
        op.commit(note(&id, "refunded", false)).await.unwrap();
        // Done on the second route: the first refuses the key.
        let refused = idem.begin("alice", &key("k"), &body).await;
        assert!(
            matches!(refused, Err(Error::KeyReused)),
            "{name}: {refused:?}"
        );
        // Another principal's key of the same text is another operation.
        let bob = proceed(&idem, "bob", "k", &body).await;
        assert_ne!(bob.operation_id(), operation, "{name}: another principal");
        bob.release().await;
        assert_eq!((db.count)(), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_two_commit_operation_is_finished_in_that_mode() {
    for db in both(timing(3_000, 300)).await {
        let name = db.name;
        let body = json!({ "amount": 4200 });
        // A request of the two-commit mode reserved the key, then its process died.
        let dead = proceed(&idem(&db), "alice", "k", &body).await;
        let operation = dead.operation_id().to_string();
        std::mem::forget(dead);
        let idem = one_commit(&db, NOTES_ROUTE);
        let busy = idem.begin("alice", &key("k"), &body).await;
        assert!(matches!(busy, Err(Error::InProgress)), "{name}: {busy:?}");
        tokio::time::sleep(Duration::from_millis(400)).await;
        let op = proceed(&idem, "alice", "k", &body).await;
        assert_eq!(op.operation_id(), operation, "{name}: its own operation id");
        assert!(op.recovered(), "{name}");
        op.commit(note(&operation, "paid", false)).await.unwrap();
        assert!(matches!(
            idem.begin("alice", &key("k"), &body).await,
            Ok(Reservation::Answered(_))
        ));
        assert_eq!((db.count)(), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_written_meanwhile_rolls_the_write_back() {
    for db in both(timing(60_000, 1_000)).await {
        let name = db.name;
        let body = json!({ "amount": 4200 });
        let held = proceed(&one_commit(&db, NOTES_ROUTE), "alice", "k", &body).await;
        // Meanwhile a request of the two-commit mode (another instance, say)
        // reserves the key: the held operation's commit is lost, and its
        // write with it.
        let two = proceed(&idem(&db), "alice", "k", &body).await;
        let id = held.operation_id().to_string();
        let lost = held.commit(note(&id, "paid", false)).await;
        assert!(matches!(lost, Err(Error::InProgress)), "{name}: {lost:?}");
        assert_eq!((db.count)(), 0, "{name}: the write was rolled back");
        let id = two.operation_id().to_string();
        two.commit(note(&id, "paid", false)).await.unwrap();
        assert_eq!((db.count)(), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_key_is_a_new_answer_over_its_row() {
    for db in both(timing(500, 50)).await {
        let name = db.name;
        let idem = one_commit(&db, NOTES_ROUTE);
        let body = json!({ "amount": 4200 });
        let first = proceed(&idem, "alice", "k", &body).await;
        let id = first.operation_id().to_string();
        first.commit(note("first", "paid", false)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
        let again = proceed(&idem, "alice", "k", &body).await;
        assert_eq!(again.operation_id(), id, "{name}: the same operation id");
        let answer = again
            .commit(note("second", "paid again", false))
            .await
            .unwrap();
        assert!(!answer.replayed, "{name}");
        match idem.begin("alice", &key("k"), &body).await {
            Ok(Reservation::Answered(replay)) => {
                assert_eq!(replay.response, answer.response, "{name}")
            }
            other => panic!("{name}: a replay expected, got {other:?}"),
        }
        assert_eq!((db.count)(), 2, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_request_lets_go_of_its_key_and_connection_after_the_lock_timeout() {
    let (db, pool) = postgres_db(timing(10_000, 500)).await;
    let idem = one_commit(&db, NOTES_ROUTE);
    let body = json!({ "amount": 4200 });
    // Phase 2 hangs: the request holds its key and never commits.
    let hung = proceed(&idem, "alice", "k", &body).await;
    let operation = hung.operation_id().to_string();
    let busy = idem.begin("alice", &key("k"), &body).await;
    assert!(matches!(busy, Err(Error::InProgress)), "{busy:?}");
    let idle = |pool: &deadpool_postgres::Pool| {
        let s = pool.status();
        (s.size, s.available)
    };
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    // The key is free (the retry is the same operation) and the hung
    // request's connection is back in the pool, not idle in a transaction.
    let retry = proceed(&idem, "alice", "k", &body).await;
    assert_eq!(retry.operation_id(), operation);
    retry.release().await;
    let waited = Instant::now();
    while idle(&pool).0 != idle(&pool).1 && waited.elapsed() < Duration::from_secs(1) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        idle(&pool).0,
        idle(&pool).1,
        "every connection back in the pool"
    );
    let c = pool.get().await.unwrap();
    let open: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM pg_stat_activity
             WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(open, 0, "no connection left idle in a transaction");
    drop(c);
    // Its late commit is refused and writes nothing.
    let late = hung.commit(note(&operation, "paid", false)).await;
    assert!(
        matches!(late, Err(Error::Store(StoreError::Unavailable { .. }))),
        "{late:?}"
    );
    assert_eq!((db.count)(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_timeout_longer_than_the_database_can_count_still_holds_keys() {
    // 30 days: PostgreSQL's idle_in_transaction_session_timeout stops at
    // about 24.8 days.
    let day = 86_400_000;
    let (db, _pool) = postgres_db(timing(300 * day, 30 * day)).await;
    let idem = one_commit(&db, NOTES_ROUTE);
    let body = json!({ "amount": 4200 });
    let op = proceed(&idem, "alice", "k", &body).await;
    let id = op.operation_id().to_string();
    op.commit(note(&id, "paid", false)).await.unwrap();
    assert_eq!((db.count)(), 1);
}
