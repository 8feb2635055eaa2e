//! A key names one operation of one route: the same key (and body) sent to
//! a second route is refused with 422, however far the first got, and each
//! route's recovery sees only its own operations.

mod common;

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use axum::response::IntoResponse;
use idemkey_axum::StaleKey;
use idemkey_axum::{Error, Recover, RecoverError, Reservation};
use serde_json::json;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_reused_on_another_route_is_refused() {
    for db in both(timing(60_000, 1_000)).await {
        let name = db.name;
        let (payments, refunds) = (
            idem_on(&db, "POST /payments"),
            idem_on(&db, "POST /refunds"),
        );
        let body = json!({ "amount": 4200 });
        // In progress on the first route: the second refuses it, not 409.
        let op = proceed(&payments, "alice", "k", &body).await;
        let refused = refunds.begin("alice", &key("k"), &body).await;
        assert!(
            matches!(refused, Err(Error::KeyReused)),
            "{name}: {refused:?}"
        );
        // Done on the first route: the second refuses it, not a replay.
        let operation = op.operation_id().to_string();
        op.commit(note(&operation, "paid", false)).await.unwrap();
        let refused = refunds.begin("alice", &key("k"), &body).await;
        let Err(e) = refused else {
            panic!("{name}: 422 expected, got {refused:?}")
        };
        assert_eq!(e.into_response().status(), 422, "{name}");
        // The first route still replays it, and another principal's key of
        // the same text on the second route is its own.
        assert!(matches!(
            payments.begin("alice", &key("k"), &body).await,
            Ok(Reservation::Answered(_))
        ));
        proceed(&refunds, "bob", "k", &body).await.release().await;
        assert_eq!((db.count)(), 1, "{name}");
    }
}

/// What a route's recovery was asked about.
#[derive(Default)]
struct Asked(Mutex<Vec<String>>);

#[async_trait]
impl Recover<Note> for Asked {
    async fn recover(&self, stale: &StaleKey) -> Result<Option<Note>, RecoverError> {
        self.0.lock().unwrap().push(stale.key.clone());
        Ok(Some(note(&stale.operation_id, &stale.key, false)))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_routes_recovery_sees_only_its_own_keys() {
    for db in both(timing(60_000, 50)).await {
        let name = db.name;
        let (payments, refunds) = (
            idem_on(&db, "POST /payments"),
            idem_on(&db, "POST /refunds"),
        );
        let dead = (
            idem_on(&db, "POST /payments"),
            idem_on(&db, "POST /refunds"),
        );
        // A process died in phase 2 of one operation on each route.
        std::mem::forget(proceed(&dead.0, "alice", "pay", &json!({})).await);
        std::mem::forget(proceed(&dead.1, "alice", "refund", &json!({})).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let asked_payments = Asked::default();
        assert_eq!(payments.recover_once(&asked_payments).await, 1, "{name}");
        assert_eq!(*asked_payments.0.lock().unwrap(), ["pay"], "{name}");
        let asked_refunds = Asked::default();
        assert_eq!(refunds.recover_once(&asked_refunds).await, 1, "{name}");
        assert_eq!(*asked_refunds.0.lock().unwrap(), ["refund"], "{name}");
    }
}

#[tokio::test]
#[should_panic(expected = "a route needs a name")]
async fn a_route_without_a_name_is_refused() {
    let db = sqlite_db(timing(600_000, 60_000)).await;
    idem_on(&db, "");
}

#[tokio::test]
#[should_panic(expected = "a zero timeout")]
async fn a_zero_recovery_timeout_is_refused() {
    let db = sqlite_db(timing(600_000, 60_000)).await;
    let _ = idem(&db).with_recovery_timeout(Duration::ZERO);
}
