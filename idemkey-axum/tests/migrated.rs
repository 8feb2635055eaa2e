//! A database of the key table's previous schema (SQLite version 3,
//! PostgreSQL version 2), with a done key and an unfinished one in it, opened
//! by this version: the table is migrated once, the done key replays byte for
//! byte, the unfinished one is still recovered under its own operation id,
//! and new keys work in both modes.

mod common;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use idemkey_axum::postgres::{self, PgKeys};
use idemkey_axum::sqlite::{self, Database, SqliteKeys};
use idemkey_axum::{Idempotency, Reservation, StoredResponse};
use serde_json::{json, Value};

use common::*;

/// The store on the file at `path`, its key table at the first `versions`
/// migrations.
fn open(path: &Path, versions: usize) -> Db {
    let migrations = &sqlite::MIGRATIONS[..versions];
    let database =
        Database::open_with(path, &[("app", NOTES), (sqlite::SCOPE, migrations)]).unwrap();
    Db {
        name: "sqlite",
        store: Arc::new(SqliteKeys::new(database, timing(60_000, 1_000))),
        count: Box::new(|| 0),
        _dir: None,
    }
}

fn versions(path: &Path) -> String {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row(
            "SELECT group_concat(version) FROM (SELECT version FROM schema_migrations
                 WHERE scope = ?1 ORDER BY version)",
            [sqlite::SCOPE],
            |r| r.get(0),
        )
        .unwrap()
}

/// Principals and keys of the keys stored before the migration, in ASCII
/// and not.
const KEYS: [(&str, &str); 2] = [("alice", "k"), ("ünïcødé ☃", "ключ 🗝")];

/// Before the migration: under each of [`KEYS`], a done key (`{key}-done`)
/// and an unfinished one (`{key}-unfinished`); their answers and operation
/// ids.
async fn stored_before(db: &Db, body: &Value) -> Vec<(StoredResponse, String)> {
    let idem = idem(db);
    let mut stored = Vec::new();
    for (principal, k) in KEYS {
        let op = proceed(&idem, principal, &format!("{k}-done"), body).await;
        let id = op.operation_id().to_string();
        let answer = op.commit(note(&id, "paid", false)).await.unwrap();
        // Let go without an answer: the operation stays, unfinished.
        let op = proceed(&idem, principal, &format!("{k}-unfinished"), body).await;
        let unfinished = op.operation_id().to_string();
        op.release().await;
        stored.push((answer.response, unfinished));
    }
    stored
}

/// After the migration: each done key replays byte for byte, each
/// unfinished one is taken over under its own operation id, and new keys
/// work in both modes.
async fn still_answered(db: &Db, body: &Value, stored: Vec<(StoredResponse, String)>) {
    let idem: Idempotency<Note> = idem(db);
    for ((principal, k), (answer, unfinished)) in KEYS.into_iter().zip(stored) {
        match idem
            .begin(principal, &key(&format!("{k}-done")), body)
            .await
        {
            Ok(Reservation::Answered(replay)) => {
                assert!(replay.replayed);
                assert_eq!(replay.response, answer, "not byte for byte");
            }
            other => panic!("{principal}: a replay expected, got {other:?}"),
        }
        let op = proceed(&idem, principal, &format!("{k}-unfinished"), body).await;
        assert!(op.recovered(), "the unfinished operation is taken over");
        assert_eq!(op.operation_id(), unfinished, "under its own operation id");
        let id = op.operation_id().to_string();
        op.commit(note(&id, "recovered", false)).await.unwrap();
    }

    for (idem, k) in [
        (idem, "new"),
        (idem_on(db, NOTES_ROUTE).provider_deduplicates(), "one"),
    ] {
        let op = proceed(&idem, "alice", k, body).await;
        let id = op.operation_id().to_string();
        let first = op.commit(note(&id, k, false)).await.unwrap();
        match idem.begin("alice", &key(k), body).await {
            Ok(Reservation::Answered(replay)) => assert_eq!(replay.response, first.response),
            other => panic!("{k}: a replay expected, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_the_previous_schema_keeps_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    let body = json!({ "amount": 4200 });
    let stored = stored_before(&open(&path, 3), &body).await;
    assert_eq!(versions(&path), "1,2,3");

    let db = open(&path, sqlite::MIGRATIONS.len());
    assert_eq!(versions(&path), "1,2,3,4", "migrated once");
    still_answered(&db, &body, stored).await;
}

/// The PostgreSQL database at `url`, its key table at the first `versions`
/// migrations.
async fn open_postgres(url: &str, versions: usize) -> Db {
    let pool = postgres::pool(tokio_postgres::Config::from_str(url).unwrap()).unwrap();
    let mut c = pool.get().await.unwrap();
    postgres::migrate(&mut c, "app", NOTES).await.unwrap();
    postgres::migrate(&mut c, postgres::SCOPE, &postgres::MIGRATIONS[..versions])
        .await
        .unwrap();
    Db {
        name: "postgres",
        store: Arc::new(PgKeys::new(pool, timing(60_000, 1_000))),
        count: Box::new(|| 0),
        _dir: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_database_of_the_previous_schema_keeps_its_keys() {
    let url = tokio::task::spawn_blocking(|| pg::Pg::shared().fresh_database())
        .await
        .unwrap();
    let name = url.rsplit('/').next().unwrap().to_string();
    let versions = move || {
        pg::Pg::shared().psql(
            &name,
            "SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations
             WHERE scope = 'idemkey'",
        )
    };
    let body = json!({ "amount": 4200 });
    let stored = stored_before(&open_postgres(&url, 2).await, &body).await;
    assert_eq!(versions().trim(), "1,2");

    let db = open_postgres(&url, postgres::MIGRATIONS.len()).await;
    assert_eq!(versions().trim(), "1,2,3", "migrated once");
    still_answered(&db, &body, stored).await;
}
