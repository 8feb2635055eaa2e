//! Tests of PostgreSQL's outbox.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::outbox::contract::{self, Harness};
use crate::store::Timing;

use crate::store::test_pg as pg;

struct Postgres {
    store: Arc<PgStore>,
}

#[async_trait]
impl Harness for Postgres {
    fn storage(&self) -> Arc<dyn OutboxStorage> {
        self.store.clone()
    }
    async fn insert(&self, e: NewEvent) {
        let c = self.store.pool.get().await.unwrap();
        insert_event(&c, &e).await.unwrap();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_storage_contract() {
    let url = tokio::task::spawn_blocking(|| pg::Pg::shared().fresh_database())
        .await
        .unwrap();
    let timing = Timing::new(Duration::from_secs(60), Duration::from_secs(5)).unwrap();
    let store = Arc::new(PgStore::connect(&url, timing).await.unwrap());
    contract::check(&Postgres { store }).await;
}
