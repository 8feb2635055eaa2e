//! A client that hangs up while its key is being reserved (axum then drops
//! the handler at its `.await`) leaves nothing behind: the reservation, if
//! the database committed it anyway, is given back, and the client's retry
//! proceeds at once instead of answering 409 until the lock timeout.

mod common;

use std::future::Future;
use std::sync::mpsc;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use idemkey_axum::sqlite::Database;
use idemkey_axum::{Error, Idempotency, Reservation};
use serde_json::json;

use common::*;

/// Queues a turn on the SQLite writer that, once started, lasts until `go`
/// is sent; returns `go` and how to wait for the start.
fn queue_a_pause(db: &Database) -> (mpsc::Sender<()>, mpsc::Receiver<()>) {
    let (go, wait) = mpsc::channel::<()>();
    let (started, has_started) = mpsc::channel::<()>();
    let db = db.clone();
    let mut write = Box::pin(async move {
        db.write(move |_| {
            let _ = started.send(());
            let _ = wait.recv();
            Ok(())
        })
        .await
    });
    // The first poll queues it; the runtime carries it on.
    assert!(write
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending());
    tokio::spawn(write);
    (go, has_started)
}

/// Waits until the writer has started a queued pause.
async fn started(pause: mpsc::Receiver<()>) {
    tokio::task::spawn_blocking(move || pause.recv().unwrap())
        .await
        .unwrap();
}

/// The retry of `k`, which must proceed well before the lock timeout;
/// commits it and checks the one note.
async fn the_retry_proceeds(name: &str, idem: &Idempotency<Note>, db: &Db, k: &str) {
    let freed_by = Instant::now() + Duration::from_secs(2);
    let retry = loop {
        match idem.begin("alice", &key(k), &json!({})).await {
            Err(Error::InProgress) if Instant::now() < freed_by => {
                tokio::time::sleep(Duration::from_millis(10)).await
            }
            other => break other,
        }
    };
    let Ok(Reservation::Proceed(op)) = retry else {
        panic!("{name}: the retry proceeds at once, got {retry:?}")
    };
    let operation = op.operation_id().to_string();
    op.commit(note(&operation, "once", false)).await.unwrap();
    assert_eq!((db.count)(), 1, "{name}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_request_dropped_while_its_reservation_commits_leaves_the_key_free() {
    let (db, database) = sqlite_db_and_database(timing(600_000, 60_000));
    let idem = idem(&db);

    // The writer is busy; the request's reservation queues behind it, and
    // behind the reservation another write, which pauses the batch they
    // share once the reservation has run in it.
    let (first, first_started) = queue_a_pause(&database);
    started(first_started).await;
    let (k, body) = (key("hung-up"), json!({}));
    let mut request = Box::pin(idem.begin("alice", &k, &body));
    assert!(request
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending());
    let (second, second_started) = queue_a_pause(&database);
    first.send(()).unwrap();
    started(second_started).await;
    // The client hangs up before that batch commits.
    drop(request);
    second.send(()).unwrap();

    the_retry_proceeds("sqlite", &idem, &db, "hung-up").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_request_dropped_while_its_reservation_waits_leaves_the_key_free() {
    let (db, pool) = postgres_db(timing(600_000, 60_000)).await;
    let idem = idem(&db);

    // Another session is inserting the same key and has not committed; the
    // request's reservation waits to learn whether that row stays.
    let mut blocker = pool.get().await.unwrap();
    let tx = blocker.transaction().await.unwrap();
    tx.batch_execute(
        "INSERT INTO idempotency_keys (customer, idem_key, fingerprint, reservation, state,
             lock_owner, locked_at, created_at, expires_at)
         VALUES ('alice', 'hung-up', '-', 'op_other', 'in_progress', 'lk_other', 0, 0, 0)",
    )
    .await
    .unwrap();
    let request = tokio::spawn({
        let idem = idem.clone();
        async move {
            let _ = idem.begin("alice", &key("hung-up"), &json!({})).await;
        }
    });
    let waiting_by = Instant::now() + Duration::from_secs(10);
    let observer = pool.get().await.unwrap();
    loop {
        let waiting: i64 = observer
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND query LIKE '%ON CONFLICT%'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if waiting > 0 {
            break;
        }
        assert!(Instant::now() < waiting_by, "the reservation never waited");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The client hangs up; then the other row goes, and the waiting INSERT
    // commits the request's reservation.
    request.abort();
    let _ = request.await;
    tx.rollback().await.unwrap();
    drop(observer);

    the_retry_proceeds("postgres", &idem, &db, "hung-up").await;
}
