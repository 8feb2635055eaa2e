//! One suite for every [`Store`]: run on SQLite and on a real PostgreSQL
//! (started by the test harness), so both keep the same promises.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::model::{
    Charge, Completed, Created, KeyRequest, Lookup, Outcome, Reserved, StaleKey, StoredResponse,
};
use super::postgres::PgStore;
use super::sqlite::SqliteStore;
use super::{SharedStore, Timing};

use super::test_pg as pg;

const LOCK: Duration = Duration::from_millis(300);

/// Both stores, fresh, with `ttl` and [`LOCK`]; the temp dir lives as long
/// as the stores.
async fn stores(ttl: Duration) -> (Vec<(&'static str, SharedStore)>, tempfile::TempDir) {
    stores_with(Timing::new(ttl, LOCK).unwrap()).await
}

async fn stores_with(timing: Timing) -> (Vec<(&'static str, SharedStore)>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStore::open(&dir.path().join("t.db"), timing).unwrap();
    let url = tokio::task::spawn_blocking(|| pg::Pg::shared().fresh_database())
        .await
        .unwrap();
    let postgres = PgStore::connect(&url, timing).await.unwrap();
    (
        vec![
            ("sqlite", Arc::new(sqlite)),
            ("postgres", Arc::new(postgres)),
        ],
        dir,
    )
}

fn req(key: &str, fp: &str) -> KeyRequest {
    KeyRequest {
        route: "POST /api/charges".into(),
        customer: "c".into(),
        key: key.into(),
        fingerprint: fp.into(),
    }
}

fn charge(key: &str, reservation: &str) -> Charge {
    Charge {
        id: crate::ids::new_id("ch"),
        object: "charge",
        key: Some(key.into()),
        customer: "c".into(),
        amount: 100,
        currency: "usd".into(),
        status: "succeeded",
        provider_ref: "pay_1".into(),
        created_at: 1,
        reservation: Some(reservation.into()),
    }
}

fn answer(body: &str) -> StoredResponse {
    StoredResponse::new(402, "application/problem+json", body.as_bytes().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_goes_free_then_in_progress_then_done_and_replays() {
    let (stores, _dir) = stores(Duration::from_secs(60)).await;
    for (name, s) in stores {
        assert!(
            matches!(
                s.keys().lookup(&req("k", "fp")).await.unwrap(),
                Lookup::Free
            ),
            "{name}"
        );
        let Reserved::Proceed(lock) = s.keys().reserve(&req("k", "fp")).await.unwrap() else {
            panic!("{name}: first reservation")
        };
        assert!(!lock.recovered);
        assert!(
            matches!(
                s.keys().lookup(&req("k", "fp")).await.unwrap(),
                Lookup::InProgress
            ),
            "{name}"
        );
        assert!(
            matches!(
                s.keys().reserve(&req("k", "fp")).await.unwrap(),
                Reserved::InProgress
            ),
            "{name}"
        );
        assert!(
            matches!(
                s.keys().lookup(&req("k", "other")).await.unwrap(),
                Lookup::KeyReused
            ),
            "{name}"
        );
        let ch = charge("k", &lock.reservation);
        let Completed::Stored(stored) = s
            .keys()
            .complete("c", "k", &lock, Outcome::Charge(ch.clone()))
            .await
            .unwrap()
        else {
            panic!("{name}: complete")
        };
        assert_eq!(stored, StoredResponse::created(&ch), "{name}");
        match s.keys().lookup(&req("k", "fp")).await.unwrap() {
            Lookup::Replay {
                response,
                expires_in_ms,
            } => {
                assert_eq!(response, stored, "{name}");
                // The key expires a TTL after it was reserved, on the store's clock.
                assert!(
                    expires_in_ms > 0 && expires_in_ms <= 60_000,
                    "{name}: {expires_in_ms}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
        match s.keys().reserve(&req("k", "fp")).await.unwrap() {
            Reserved::Replay(r) => assert_eq!(r, stored, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
        assert!(
            matches!(
                s.keys().reserve(&req("k", "other")).await.unwrap(),
                Reserved::KeyReused
            ),
            "{name}"
        );
        // A second completion finds the key done and changes nothing.
        assert!(
            matches!(
                s.keys().complete("c", "k", &lock, Outcome::Answer(answer("x"))).await.unwrap(),
                Completed::AlreadyDone(r) if r == stored
            ),
            "{name}"
        );
        let charges = s.charges("c").await.unwrap();
        assert_eq!(charges.len(), 1, "{name}");
        assert_eq!(charges[0].id, ch.id, "{name}");
        assert_eq!(s.delete_customer("c").await.unwrap(), (1, 1), "{name}");
        assert!(
            matches!(
                s.keys().lookup(&req("k", "fp")).await.unwrap(),
                Lookup::Free
            ),
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_reservations_of_one_key_make_one_owner() {
    // A lock that cannot go stale while fifty callers queue for connections.
    let (stores, _dir) =
        stores_with(Timing::new(Duration::from_secs(600), Duration::from_secs(60)).unwrap()).await;
    for (name, s) in stores {
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let s = s.clone();
                tokio::spawn(async move { s.keys().reserve(&req("same", "fp")).await.unwrap() })
            })
            .collect();
        let mut owners = 0;
        for t in tasks {
            match t.await.unwrap() {
                Reserved::Proceed(lock) => {
                    assert!(!lock.recovered, "{name}: no takeover of a live lock");
                    owners += 1
                }
                Reserved::InProgress => {}
                other => panic!("{name}: {other:?}"),
            }
        }
        assert_eq!(owners, 1, "{name}: exactly one reservation wins");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_released_or_stale_lock_is_taken_over_with_the_same_operation() {
    let (stores, _dir) = stores(Duration::from_secs(60)).await;
    for (name, s) in stores {
        let Reserved::Proceed(first) = s.keys().reserve(&req("r", "fp")).await.unwrap() else {
            panic!("{name}")
        };
        s.keys().release("c", "r", &first).await.unwrap();
        let taken_at = Instant::now();
        let Reserved::Proceed(second) = s.keys().reserve(&req("r", "fp")).await.unwrap() else {
            panic!("{name}: a released key is free at once")
        };
        assert!(second.recovered, "{name}");
        assert_eq!(
            second.reservation, first.reservation,
            "{name}: same operation"
        );
        // The first owner lost its lock: its completion writes nothing.
        assert!(
            matches!(
                s.keys()
                    .complete("c", "r", &first, Outcome::Answer(answer("late")))
                    .await
                    .unwrap(),
                Completed::LockLost
            ),
            "{name}"
        );
        // Stale after the lock timeout: listed, and claimed by one taker only.
        let fresh = s
            .keys()
            .stale_keys("POST /api/charges", 10)
            .await
            .unwrap()
            .is_empty();
        // A loaded machine may take the whole lock timeout to get here.
        if taken_at.elapsed() < LOCK {
            assert!(fresh, "{name}: still fresh");
        }
        tokio::time::sleep(LOCK + Duration::from_millis(100)).await;
        let stale = s.keys().stale_keys("POST /api/charges", 10).await.unwrap();
        assert_eq!(stale.len(), 1, "{name}");
        assert_eq!(stale[0].operation_id, first.reservation, "{name}");
        let third = s
            .keys()
            .take_over(&stale[0])
            .await
            .unwrap()
            .expect("claimed");
        assert!(
            s.keys().take_over(&stale[0]).await.unwrap().is_none(),
            "{name}: claimed once"
        );
        let gone = StaleKey {
            operation_id: "op_other".into(),
            ..stale[0].clone()
        };
        assert!(
            s.keys().take_over(&gone).await.unwrap().is_none(),
            "{name}: another operation"
        );
        assert!(
            matches!(
                s.keys()
                    .complete("c", "r", &second, Outcome::Answer(answer("second")))
                    .await
                    .unwrap(),
                Completed::LockLost
            ),
            "{name}"
        );
        assert!(
            matches!(
                s.keys()
                    .complete("c", "r", &third, Outcome::Answer(answer("third")))
                    .await
                    .unwrap(),
                Completed::Stored(_)
            ),
            "{name}"
        );
        assert!(
            s.charges("c").await.unwrap().is_empty(),
            "{name}: an answer is not a charge"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expired_keys_are_new_operations_and_are_reaped() {
    const TTL: Duration = Duration::from_millis(600);
    let (stores, _dir) = stores_with(Timing::new(TTL, Duration::from_millis(60)).unwrap()).await;
    for (name, s) in stores {
        let reserved_at = Instant::now();
        let Reserved::Proceed(lock) = s.keys().reserve(&req("e", "fp")).await.unwrap() else {
            panic!("{name}")
        };
        s.keys()
            .complete(
                "c",
                "e",
                &lock,
                Outcome::Charge(charge("e", &lock.reservation)),
            )
            .await
            .unwrap();
        let reaped = s.keys().reap().await.unwrap();
        // A loaded machine may take the whole TTL to get here.
        if reserved_at.elapsed() < TTL {
            assert_eq!(reaped, 0, "{name}: not yet expired");
        }
        // Every sleep below lasts past a TTL counted from before the reservation.
        tokio::time::sleep(TTL + Duration::from_millis(100)).await;
        // Expired: free even with another payload, and a new operation id.
        assert!(
            matches!(
                s.keys().lookup(&req("e", "other")).await.unwrap(),
                Lookup::Free
            ),
            "{name}"
        );
        let Reserved::Proceed(again) = s.keys().reserve(&req("e", "other")).await.unwrap() else {
            panic!("{name}")
        };
        assert_ne!(again.reservation, lock.reservation, "{name}");
        assert!(!again.recovered, "{name}");
        // Unfinished: the reaper leaves it, however old; a done expired key goes.
        let Reserved::Proceed(other) = s.keys().reserve(&req("f", "fp")).await.unwrap() else {
            panic!("{name}")
        };
        s.keys()
            .complete("c", "f", &other, Outcome::Answer(answer("f")))
            .await
            .unwrap();
        tokio::time::sleep(TTL + Duration::from_millis(100)).await;
        assert_eq!(
            s.keys().reap().await.unwrap(),
            1,
            "{name}: only the done key"
        );
        assert_eq!(
            s.charges("c").await.unwrap().len(),
            1,
            "{name}: charges stay"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_operation_never_gets_two_charges() {
    // A lock that stays live however slow the machine: the key must still be
    // in progress at the end.
    let (stores, _dir) =
        stores_with(Timing::new(Duration::from_secs(600), Duration::from_secs(60)).unwrap()).await;
    for (name, s) in stores {
        let Reserved::Proceed(lock) = s.keys().reserve(&req("u", "fp")).await.unwrap() else {
            panic!("{name}")
        };
        // A charge for this operation already exists (written by a naive
        // path or a bug): UNIQUE(reservation) refuses the second.
        s.insert_charge(&charge("u", &lock.reservation))
            .await
            .unwrap();
        assert!(
            matches!(
                s.keys()
                    .complete(
                        "c",
                        "u",
                        &lock,
                        Outcome::Charge(charge("u", &lock.reservation))
                    )
                    .await
                    .unwrap(),
                Completed::LockLost
            ),
            "{name}"
        );
        assert_eq!(s.charges("c").await.unwrap().len(), 1, "{name}");
        assert!(
            matches!(
                s.keys().lookup(&req("u", "fp")).await.unwrap(),
                Lookup::InProgress
            ),
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_late_completion_gets_the_taker_s_answer_or_nothing_once_the_key_is_gone() {
    let (stores, _dir) = stores(Duration::from_secs(60)).await;
    for (name, s) in stores {
        let Reserved::Proceed(first) = s.keys().reserve(&req("late", "fp")).await.unwrap() else {
            panic!("{name}")
        };
        s.keys().release("c", "late", &first).await.unwrap();
        let Reserved::Proceed(taker) = s.keys().reserve(&req("late", "fp")).await.unwrap() else {
            panic!("{name}")
        };
        let done = s
            .keys()
            .complete("c", "late", &taker, Outcome::Answer(answer("taker")));
        assert!(
            matches!(done.await.unwrap(), Completed::Stored(_)),
            "{name}"
        );
        match s
            .keys()
            .complete("c", "late", &first, Outcome::Answer(answer("first")))
            .await
        {
            Ok(Completed::AlreadyDone(r)) => assert_eq!(r.body, b"taker", "{name}"),
            other => panic!("{name}: {other:?}"),
        }
        let Reserved::Proceed(gone) = s.keys().reserve(&req("gone", "fp")).await.unwrap() else {
            panic!("{name}")
        };
        s.delete_customer("c").await.unwrap();
        let late = s.keys().complete(
            "c",
            "gone",
            &gone,
            Outcome::Charge(charge("gone", &gone.reservation)),
        );
        assert!(matches!(late.await.unwrap(), Completed::LockLost), "{name}");
        assert!(
            s.charges("c").await.unwrap().is_empty(),
            "{name}: no charge after a reset"
        );
    }
}
