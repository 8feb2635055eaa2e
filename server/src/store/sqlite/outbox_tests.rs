//! Tests of SQLite's outbox.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::outbox::contract::{self, Harness};
use crate::store::Timing;

struct Sqlite {
    store: Arc<SqliteStore>,
    _dir: tempfile::TempDir,
}

fn open() -> Sqlite {
    let dir = tempfile::tempdir().unwrap();
    let timing = Timing::new(Duration::from_secs(60), Duration::from_secs(5)).unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("t.db"), timing).unwrap());
    Sqlite { store, _dir: dir }
}

#[async_trait]
impl Harness for Sqlite {
    fn storage(&self) -> Arc<dyn OutboxStorage> {
        self.store.clone()
    }
    async fn insert(&self, e: NewEvent) {
        self.store
            .db
            .write(move |c| {
                let tx = c.savepoint()?;
                insert_event(&tx, &e)?;
                tx.commit()
            })
            .await
            .unwrap()
    }
    async fn pass(&self, ms: i64) {
        tokio::time::sleep(Duration::from_millis(ms as u64)).await
    }
    fn unit(&self) -> i64 {
        // Claims of 3 units must outlive a few statements on a loaded
        // machine, where 300 ms can pass between two of them.
        400
    }
}

#[tokio::test]
async fn sqlite_keeps_the_storage_contract() {
    contract::check(&open()).await;
}

#[tokio::test]
async fn a_second_event_for_one_charge_is_refused() {
    let h = open();
    let e = NewEvent {
        id: "evt_1".into(),
        customer: "c".into(),
        charge_id: "ch_1".into(),
        amount: 1,
        currency: "eur".into(),
    };
    let again = NewEvent {
        id: "evt_2".into(),
        ..e.clone()
    };
    let r = h
        .store
        .db
        .write(move |c| {
            let tx = c.savepoint()?;
            insert_event(&tx, &e)?;
            insert_event(&tx, &again)?;
            tx.commit()
        })
        .await;
    assert!(r.is_err(), "UNIQUE(charge_id)");
}
