#![doc = include_str!("../README.md")]
//!
//! # The phases
//!
//! A request with an `Idempotency-Key` (bare or as an sf-string, as the
//! idemkey browser module sends it) runs in explicit phases:
//!
//! - **look-up** ([`Idempotency::begin`]): a finished key is answered with its
//!   stored status and body byte for byte and `Idempotent-Replayed: true`; the
//!   same key with another payload is `422`, a key whose first request still
//!   runs is `409` with `Retry-After` ([`Error`], as `application/problem+json`);
//! - **phase 1**: otherwise the key is reserved atomically for this request,
//!   with an operation id ([`Operation::operation_id`]);
//! - **phase 2**, the handler's: the provider call, outside any transaction,
//!   with the operation id as the provider's idempotency key;
//! - **phase 3** ([`Operation::commit`]): the application's own write
//!   ([`sqlite::SqliteCommit`] or [`postgres::PgCommit`]) and the response it
//!   returns are committed with the key in one transaction on the
//!   application's database, so both or neither survive a crash.
//!
//! A request killed between phase 2 and phase 3 leaves its key locked: after
//! the lock timeout its retry takes the operation over with the same
//! operation id (the provider answers the first call's result, nothing is
//! paid twice), however late it comes, and if no retry comes, the
//! [reaper](Idempotency::reaper) asks the application's [`Recover`] what
//! phase 2 did and commits it. Done keys expire after
//! [`Timing::key_ttl`]; an unfinished operation never does. A key names one
//! operation of one route (the name given to [`Idempotency::new`]) for one
//! principal the application supplies: two customers' keys never meet, and
//! a key reused on another route is refused with `422`.
//!
//! For a provider that deduplicates by the key it is given,
//! [`Idempotency::provider_deduplicates`] makes phase 3 the operation's one
//! durable commit: phase 1 holds the key with a lock that writes nothing
//! ([`KeyStore::hold`]) and the operation id is derived from the request, so
//! a request killed before phase 3 leaves nothing to recover and its retry,
//! at once, calls the provider under the same id.
//!
//! # A route, tested
//!
//! An orders route on SQLite (the example application under `examples/`
//! does the same on either database, with a provider over HTTP):
//!
//! ```
//! use std::sync::Arc;
//!
//! use axum::extract::State;
//! use axum::response::{IntoResponse, Response};
//! use axum::Json;
//! use idemkey_axum::Fingerprinter;
//! use idemkey_axum::Migration;
//! use idemkey_axum::StoredResponse;
//! use idemkey_axum::sqlite::{self, Database, SqliteCommit, SqliteKeys};
//! use idemkey_axum::{Idempotency, IdempotencyKey, Reservation, Timing, Written};
//! use serde_json::{json, Value};
//!
//! /// The application's own table, with its own versioned migrations.
//! const ORDERS: &[Migration] = &[Migration {
//!     version: 1,
//!     name: "orders",
//!     sql: &["CREATE TABLE orders (id TEXT PRIMARY KEY, amount INTEGER NOT NULL,
//!                                  payment TEXT NOT NULL UNIQUE)"],
//! }];
//!
//! /// Phase 3: the order row, committed with the stored answer.
//! struct PlaceOrder { id: String, amount: i64, payment: String }
//!
//! impl SqliteCommit for PlaceOrder {
//!     fn write(self, conn: &rusqlite::Connection) -> rusqlite::Result<Written> {
//!         conn.execute("INSERT INTO orders (id, amount, payment) VALUES (?1, ?2, ?3)",
//!             rusqlite::params![self.id, self.amount, self.payment])?;
//!         let body = json!({ "id": self.id, "amount": self.amount, "payment": self.payment });
//!         let response = StoredResponse::json(201, body.to_string().into_bytes());
//!         Ok(Written::response(response).with_record_id(self.id))
//!     }
//! }
//!
//! async fn place_order(
//!     State(idem): State<Idempotency<PlaceOrder>>,
//!     key: IdempotencyKey,
//!     Json(body): Json<Value>,
//! ) -> Response {
//!     let customer = "cus_1"; // from the authenticated session
//!     let op = match idem.begin(customer, &key, &body).await {
//!         Ok(Reservation::Proceed(op)) => op,
//!         Ok(Reservation::Answered(replay)) => return replay.into_response(),
//!         Err(refused) => return refused.into_response(),
//!     };
//!     // Phase 2, outside any transaction: your provider's client, called
//!     // with the operation id as its idempotency key.
//!     let payment = format!("pay_for_{}", op.operation_id());
//!     let amount = body["amount"].as_i64().unwrap_or(0);
//!     let order = PlaceOrder { id: format!("ord_{}", op.operation_id()), amount, payment };
//!     match op.commit(order).await {
//!         Ok(answer) => answer.into_response(),
//!         Err(e) => e.into_response(),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("shop.db");
//! let db = Database::open_with(&path, &[("shop", ORDERS), (sqlite::SCOPE, sqlite::MIGRATIONS)])?;
//! let keys = SqliteKeys::new(db.clone(), Timing::default());
//! let idem = Idempotency::new("POST /orders", Arc::new(keys), Fingerprinter::new(&[7; 32])?);
//! let app: axum::Router = axum::Router::new()
//!     .route("/orders", axum::routing::post(place_order))
//!     .with_state(idem.clone());
//! # drop(app);
//!
//! // The same request twice: one order, the second answer a replay.
//! let key = IdempotencyKey("8e03978e-40d5-43e8-bc93-6894a57f9324".into());
//! let first = place_order(State(idem.clone()), key.clone(), Json(json!({"amount": 4200}))).await;
//! let again = place_order(State(idem.clone()), key.clone(), Json(json!({"amount": 4200}))).await;
//! assert_eq!(first.status(), 201);
//! assert_eq!(again.status(), 201);
//! assert_eq!(again.headers()["idempotent-replayed"], "true");
//! let orders: i64 = db.read(|c| c.query_row("SELECT COUNT(*) FROM orders", [], |r| r.get(0)))
//!     .await?;
//! assert_eq!(orders, 1);
//! // Another payload under the same key: 422.
//! let other = place_order(State(idem), key, Json(json!({"amount": 1}))).await;
//! assert_eq!(other.status(), 422);
//! # Ok(())
//! # }
//! ```
//!
//! On PostgreSQL the write implements [`postgres::PgCommit`] instead, the
//! store is [`postgres::PgKeys`] on the application's deadpool pool, and
//! [`postgres::migrate()`] runs [`postgres::MIGRATIONS`] beside the
//! application's own.
#![deny(missing_docs)]

mod error;
mod fingerprint;
mod hold;
mod idempotency;
mod ids;
pub mod implementers;
mod in_flight;
mod key;
mod migrations;
mod model;
mod phases;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod problem;
mod recovery;
mod replay_cache;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod store;
mod store_error;
mod stored;

pub use error::{Error, RETRY_AFTER_SECS};
pub use fingerprint::{random_secret, Fingerprinter, MIN_SECRET};
pub use idempotency::{Idempotency, DEFAULT_RECOVERY_TIMEOUT, DEFAULT_REPLAY_CACHE};
pub use key::{IdempotencyKey, KEY_HEADER, MAX_KEY_LEN};
pub use migrations::Migration;
pub use model::StaleKey;
pub use phases::{Answer, Keys, Operation, Reservation, REPLAYED};
pub use recovery::{Recover, RecoverError};
pub use store::{
    KeyStore, StoreError, StoreResult, Timing, Written, MAX_DURATION, TTL_PER_LOCK_TIMEOUT,
};
pub use stored::{StoredResponse, KEPT_HEADERS};
