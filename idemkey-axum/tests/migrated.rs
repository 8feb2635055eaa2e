//! An SQLite file of the key table's previous schema (version 3), with a
//! done key and an unfinished one in it, opened by this version: the table is
//! migrated once, the done key replays byte for byte, the unfinished one is
//! still recovered under its own operation id, and new keys work in both
//! modes.

mod common;

use std::path::Path;
use std::sync::Arc;

use idemkey_axum::sqlite::{self, Database, SqliteKeys};
use idemkey_axum::{Idempotency, Reservation};
use serde_json::json;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_the_previous_schema_keeps_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    let body = json!({ "amount": 4200 });
    let (answer, unfinished) = {
        let db = open(&path, 3);
        let idem = idem(&db);
        let op = proceed(&idem, "alice", "done", &body).await;
        let id = op.operation_id().to_string();
        let answer = op.commit(note(&id, "paid", false)).await.unwrap();
        // Let go without an answer: the operation stays, unfinished.
        let op = proceed(&idem, "alice", "unfinished", &body).await;
        let unfinished = op.operation_id().to_string();
        op.release().await;
        (answer.response, unfinished)
    };
    assert_eq!(versions(&path), "1,2,3");

    let db = open(&path, sqlite::MIGRATIONS.len());
    assert_eq!(versions(&path), "1,2,3,4", "migrated once");
    let idem: Idempotency<Note> = idem(&db);
    match idem.begin("alice", &key("done"), &body).await {
        Ok(Reservation::Answered(replay)) => {
            assert!(replay.replayed);
            assert_eq!(replay.response, answer, "not byte for byte");
        }
        other => panic!("a replay expected, got {other:?}"),
    }
    let op = proceed(&idem, "alice", "unfinished", &body).await;
    assert!(op.recovered(), "the unfinished operation is taken over");
    assert_eq!(op.operation_id(), unfinished, "under its own operation id");
    let id = op.operation_id().to_string();
    op.commit(note(&id, "recovered", false)).await.unwrap();

    for (idem, k) in [
        (idem, "new"),
        (idem_on(&db, NOTES_ROUTE).provider_deduplicates(), "one"),
    ] {
        let op = proceed(&idem, "alice", k, &body).await;
        let id = op.operation_id().to_string();
        let first = op.commit(note(&id, k, false)).await.unwrap();
        match idem.begin("alice", &key(k), &body).await {
            Ok(Reservation::Answered(replay)) => assert_eq!(replay.response, first.response),
            other => panic!("{k}: a replay expected, got {other:?}"),
        }
    }
}
