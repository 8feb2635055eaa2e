//! What the crate's tests share: an application's write (a note), a fresh
//! database of each kind with the key table, and the few calls a request
//! makes.
#![allow(dead_code)]

#[path = "../../../server/tests/common/pg.rs"]
pub mod pg;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use idemkey_axum::postgres::{self, PgCommit, PgKeys};
use idemkey_axum::sqlite::{self, Database, SqliteCommit, SqliteKeys};
use idemkey_axum::Fingerprinter;
use idemkey_axum::KeyStore;
use idemkey_axum::Migration;
use idemkey_axum::StoredResponse;
use idemkey_axum::{
    Idempotency, IdempotencyKey, Reservation, StoreError, StoreResult, Timing, Written,
};
use serde_json::json;

pub const NOTES: &[Migration] = &[Migration {
    version: 1,
    name: "notes",
    sql: &["CREATE TABLE notes (operation TEXT NOT NULL UNIQUE, text TEXT NOT NULL)"],
}];

/// The application's write: one row, then, if asked, a failure after it.
pub struct Note {
    pub operation: String,
    pub text: String,
    pub fail_after_write: bool,
    /// The answer to store, if not the note's JSON.
    pub answer: Option<StoredResponse>,
}

impl Note {
    /// The same note, answered with `answer`.
    pub fn answering(self, answer: StoredResponse) -> Note {
        Note {
            answer: Some(answer),
            ..self
        }
    }

    fn written(&self, n: u64) -> Result<Written, String> {
        if self.fail_after_write {
            return Err("the application's write failed after its insert".into());
        }
        let body = json!({ "note": self.text }).to_string().into_bytes();
        let answer = self
            .answer
            .clone()
            .unwrap_or_else(|| StoredResponse::json(201, body));
        Ok(if n == 1 {
            Written::response(answer).with_record_id(&self.operation)
        } else {
            Written::already_recorded()
        })
    }
}

impl SqliteCommit for Note {
    fn write(self, conn: &rusqlite::Connection) -> rusqlite::Result<Written> {
        let n = conn.execute(
            "INSERT INTO notes (operation, text) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            [&self.operation, &self.text],
        )?;
        self.written(n as u64)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))
    }
}

#[async_trait]
impl PgCommit for Note {
    async fn write<C: deadpool_postgres::GenericClient>(self, client: &C) -> StoreResult<Written> {
        let n = client
            .execute(
                "INSERT INTO notes (operation, text) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&self.operation, &self.text],
            )
            .await?;
        self.written(n).map_err(StoreError::failed)
    }
}

/// One database of each kind, fresh, and how to count its notes.
pub struct Db {
    pub name: &'static str,
    pub store: Arc<dyn KeyStore<Note>>,
    pub count: Box<dyn Fn() -> i64 + Send + Sync>,
    pub _dir: Option<tempfile::TempDir>,
}

pub async fn sqlite_db(timing: Timing) -> Db {
    sqlite_db_and_database(timing).0
}

/// [`sqlite_db`] and the database its store writes through.
pub fn sqlite_db_and_database(timing: Timing) -> (Db, Database) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    let database = Database::open_with(
        &path,
        &[("app", NOTES), (sqlite::SCOPE, sqlite::MIGRATIONS)],
    )
    .unwrap();
    let db = Db {
        name: "sqlite",
        store: Arc::new(SqliteKeys::new(database.clone(), timing)),
        count: Box::new(move || {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0))
                .unwrap()
        }),
        _dir: Some(dir),
    };
    (db, database)
}

pub async fn postgres_db(timing: Timing) -> (Db, deadpool_postgres::Pool) {
    let url = tokio::task::spawn_blocking(|| pg::Pg::shared().fresh_database())
        .await
        .unwrap();
    let pool = postgres::pool(tokio_postgres::Config::from_str(&url).unwrap()).unwrap();
    let mut c = pool.get().await.unwrap();
    postgres::migrate(&mut c, "app", NOTES).await.unwrap();
    postgres::migrate(&mut c, postgres::SCOPE, postgres::MIGRATIONS)
        .await
        .unwrap();
    let db = url.rsplit('/').next().unwrap().to_string();
    let db = Db {
        name: "postgres",
        store: Arc::new(PgKeys::new(pool.clone(), timing)),
        count: Box::new(move || {
            pg::Pg::shared()
                .psql(&db, "SELECT COUNT(*) FROM notes")
                .trim()
                .parse()
                .unwrap()
        }),
        _dir: None,
    };
    (db, pool)
}

pub async fn both(timing: Timing) -> Vec<Db> {
    vec![sqlite_db(timing).await, postgres_db(timing).await.0]
}

pub fn timing(ttl_ms: u64, lock_ms: u64) -> Timing {
    Timing::new(
        Duration::from_millis(ttl_ms),
        Duration::from_millis(lock_ms),
    )
    .unwrap()
}

/// The route the tests' notes are written on.
pub const NOTES_ROUTE: &str = "POST /notes";

pub fn idem(db: &Db) -> Idempotency<Note> {
    idem_on(db, NOTES_ROUTE)
}

/// Idempotency for the route named `route`, on `db`'s store.
pub fn idem_on(db: &Db, route: &str) -> Idempotency<Note> {
    Idempotency::new(
        route,
        db.store.clone(),
        Fingerprinter::new(&[9; 32]).unwrap(),
    )
    .with_replay_cache(0)
}

pub fn note(operation: &str, text: &str, fail_after_write: bool) -> Note {
    Note {
        operation: operation.to_string(),
        text: text.into(),
        fail_after_write,
        answer: None,
    }
}

pub fn key(k: &str) -> IdempotencyKey {
    IdempotencyKey(k.into())
}

pub async fn proceed(
    idem: &Idempotency<Note>,
    principal: &str,
    k: &str,
    body: &serde_json::Value,
) -> idemkey_axum::Operation<Note> {
    match idem.begin(principal, &key(k), body).await {
        Ok(Reservation::Proceed(op)) => op,
        other => panic!("{k}: expected to proceed, got {other:?}"),
    }
}
