//! An axum shop on idemkey-axum: `POST /orders` pays at a provider (over
//! HTTP, with the operation id as its idempotency key) and records the order;
//! the order and the stored answer commit in one transaction, on SQLite or
//! PostgreSQL. `GET /orders` lists the customer's orders; `POST /bare/orders`
//! is the same order without idempotency, for `make bench`.
//!
//! `orders --database sqlite:PATH|postgres://USER@HOST:PORT/DB --provider
//! http://ADDR|instant --secret TEXT [--addr ADDR] [--lock-timeout-ms N]
//! [--pause-after-provider-ms N] [--provider-dedups]` prints `listening on
//! http://ADDR` (`instant`: a provider in process that answers at once, for
//! `make bench`). `--provider-dedups`: the provider deduplicates by the key
//! it is given (both providers here do), so each order makes one durable
//! commit instead of two. With `--pause-after-provider-ms` each
//! order waits that long between the provider's answer and the commit, after
//! printing `provider answered KEY`: the window a `kill -9` is aimed at.

mod provider;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use deadpool_postgres::GenericClient;
use idemkey_axum::postgres::{self, PgCommit, PgKeys};
use idemkey_axum::sqlite::{self, Database, SqliteCommit, SqliteKeys};
use idemkey_axum::{Fingerprinter, Migration, StaleKey, StoredResponse};
use idemkey_axum::{Idempotency, IdempotencyKey, KeyStore, Recover, RecoverError, Reservation};
use idemkey_axum::{StoreResult, Timing, Written};
use serde_json::{json, Value};

use crate::provider::{Provider, Refused};

/// The shop's own table, on either database.
const ORDERS: &[Migration] = &[Migration {
    version: 1,
    name: "orders",
    sql: &["CREATE TABLE IF NOT EXISTS orders (
        id TEXT PRIMARY KEY, customer TEXT NOT NULL, operation TEXT NOT NULL UNIQUE,
        amount BIGINT NOT NULL, payment TEXT NOT NULL)"],
}];

// #region write
/// Phase 3: the order, committed with the stored answer (201 and the order).
struct PlaceOrder {
    customer: String,
    operation: String,
    amount: i64,
    payment: String,
}

impl PlaceOrder {
    fn body(&self) -> Value {
        json!({ "id": format!("ord_{}", self.operation), "amount": self.amount, "payment": self.payment })
    }

    fn answer(&self) -> Written {
        let body = self.body().to_string().into_bytes();
        Written::response(StoredResponse::json(201, body))
            .with_record_id(format!("ord_{}", self.operation))
    }
}

impl SqliteCommit for PlaceOrder {
    fn write(self, conn: &rusqlite::Connection) -> rusqlite::Result<Written> {
        let done = self.answer();
        let n = conn.execute(
            "INSERT INTO orders (id, customer, operation, amount, payment) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (operation) DO NOTHING",
            rusqlite::params![format!("ord_{}", self.operation), self.customer, self.operation, self.amount, self.payment],
        )?;
        Ok(if n == 1 {
            done
        } else {
            Written::already_recorded()
        })
    }
}

#[async_trait]
impl PgCommit for PlaceOrder {
    async fn write<C: GenericClient>(self, client: &C) -> StoreResult<Written> {
        let done = self.answer();
        let n = client.execute(
            "INSERT INTO orders (id, customer, operation, amount, payment) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (operation) DO NOTHING",
            &[&format!("ord_{}", self.operation), &self.customer, &self.operation, &self.amount, &self.payment],
        ).await?;
        Ok(if n == 1 {
            done
        } else {
            Written::already_recorded()
        })
    }
}
// #endregion write

#[derive(Clone)]
struct App {
    idem: Idempotency<PlaceOrder>,
    provider: Provider,
    db: Db,
    pause_after_provider: Option<Duration>,
}

#[derive(Clone)]
enum Db {
    Sqlite(Database),
    Postgres(deadpool_postgres::Pool),
}

// #region handler
async fn place_order(
    State(app): State<App>,
    key: IdempotencyKey,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    // A real shop takes the customer from its session.
    let customer = headers
        .get("x-customer-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("anonymous");
    let Some(amount) = body["amount"].as_i64().filter(|a| *a > 0) else {
        return (StatusCode::BAD_REQUEST, "amount: a positive integer").into_response();
    };
    let op = match app.idem.begin(customer, &key, &body).await {
        Ok(Reservation::Proceed(op)) => op,
        Ok(Reservation::Answered(replay)) => return replay.into_response(),
        Err(refused) => return refused.into_response(), // 409, 422, 503
    };
    // Phase 2, outside any transaction, keyed by the operation.
    let payment = match app.provider.pay(op.operation_id(), amount).await {
        Ok(payment) => payment,
        Err(e) => {
            op.release().await; // nothing to commit: the retry may start at once
            let status = match e {
                // The key's first try paid another amount (a retry with
                // another payload after a crash): as the crate's 422.
                Refused::OtherAmount(_) => StatusCode::UNPROCESSABLE_ENTITY,
                Refused::Failed(_) => StatusCode::BAD_GATEWAY,
            };
            return (status, e.to_string()).into_response();
        }
    };
    app.pause_if_asked(key.as_str()).await;
    // Phase 3: the order and the answer, in one transaction.
    let order = PlaceOrder {
        customer: customer.to_string(),
        operation: op.operation_id().to_string(),
        amount,
        payment,
    };
    match op.commit(order).await {
        Ok(answer) => answer.into_response(),
        Err(e) => e.into_response(),
    }
}

/// What phase 3 commits for an order whose request died: the provider's
/// record of the payment made under the operation id.
struct AskProvider(Provider);

#[async_trait]
impl Recover<PlaceOrder> for AskProvider {
    async fn recover(&self, stale: &StaleKey) -> Result<Option<PlaceOrder>, RecoverError> {
        Ok(self
            .0
            .find(&stale.operation_id)
            .await?
            .map(|(payment, amount)| PlaceOrder {
                customer: stale.principal.clone(),
                operation: stale.operation_id.clone(),
                amount,
                payment,
            }))
    }
}
// #endregion handler

impl App {
    async fn pause_if_asked(&self, key: &str) {
        if let Some(pause) = self.pause_after_provider {
            println!("provider answered {key}");
            tokio::time::sleep(pause).await;
        }
    }
}

async fn list_orders(State(app): State<App>, headers: HeaderMap) -> Response {
    let customer = headers
        .get("x-customer-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("anonymous");
    const SQL: &str = "SELECT id, amount, payment FROM orders WHERE customer = $1 ORDER BY id";
    let rows: Result<Vec<Value>, String> = match &app.db {
        Db::Sqlite(db) => {
            let c = customer.to_string();
            db.read(move |conn| {
                let mut q = conn.prepare(SQL)?;
                let rows = q.query_map([c], |r| {
                    Ok(json!({ "id": r.get::<_, String>(0)?, "amount": r.get::<_, i64>(1)?, "payment": r.get::<_, String>(2)? }))
                })?;
                rows.collect()
            })
            .await
            .map_err(|e| e.to_string())
        }
        Db::Postgres(pool) => async {
            let c = pool.get().await.map_err(|e| e.to_string())?;
            let rows = c.query(SQL, &[&customer]).await.map_err(|e| e.to_string())?;
            Ok(rows
                .iter()
                .map(|r| json!({ "id": r.get::<_, String>(0), "amount": r.get::<_, i64>(1), "payment": r.get::<_, String>(2) }))
                .collect())
        }
        .await,
    };
    match rows {
        Ok(orders) => Json(json!({ "orders": orders })).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

/// `POST /bare/orders`, for `make bench`: the same order, paid and written
/// alike, without idempotency (no key: every request is a new order).
async fn place_order_bare(State(app): State<App>, Json(body): Json<Value>) -> Response {
    let Some(amount) = body["amount"].as_i64().filter(|a| *a > 0) else {
        return (StatusCode::BAD_REQUEST, "amount: a positive integer").into_response();
    };
    let operation = idemkey_axum::implementers::new_id("op");
    let payment = match app.provider.pay(&operation, amount).await {
        Ok(payment) => payment,
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let order = PlaceOrder {
        customer: "bare".into(),
        operation,
        amount,
        payment,
    };
    let answer = order.body();
    let written: Result<Written, String> = match &app.db {
        Db::Sqlite(db) => db
            .write(move |conn| SqliteCommit::write(order, conn))
            .await
            .map_err(|e| e.to_string()),
        Db::Postgres(pool) => {
            async {
                let mut c = pool.get().await.map_err(|e| e.to_string())?;
                let tx = c.transaction().await.map_err(|e| e.to_string())?;
                let w = PgCommit::write(order, &tx)
                    .await
                    .map_err(|e| e.to_string())?;
                tx.commit().await.map_err(|e| e.to_string())?;
                Ok(w)
            }
            .await
        }
    };
    match written {
        Ok(_) => (StatusCode::CREATED, Json(answer)).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let need = |name: &str| arg(&args, name).ok_or(format!("{name} is required"));
    let ms = |name: &str| {
        arg(&args, name)
            .map(|v| v.parse::<u64>().map(Duration::from_millis))
            .transpose()
    };
    let lock_timeout = ms("--lock-timeout-ms").map_err(|e| e.to_string())?;
    let timing = Timing::new(
        Timing::default().key_ttl(),
        lock_timeout.unwrap_or(Timing::default().lock_timeout()),
    )?;
    let database = need("--database")?;
    // #region setup
    let (store, db): (Arc<dyn KeyStore<PlaceOrder>>, Db) = match database.strip_prefix("sqlite:") {
        Some(path) => {
            let db = Database::open_with(
                path.as_ref(),
                &[("shop", ORDERS), (sqlite::SCOPE, sqlite::MIGRATIONS)],
            )?;
            (
                Arc::new(SqliteKeys::new(db.clone(), timing)),
                Db::Sqlite(db),
            )
        }
        None => {
            let cfg = tokio_postgres::Config::from_str(&database).map_err(|e| e.to_string())?;
            let pool = postgres::pool(cfg)?;
            let mut c = pool.get().await.map_err(|e| e.to_string())?;
            postgres::migrate(&mut c, "shop", ORDERS)
                .await
                .map_err(|e| e.to_string())?;
            postgres::migrate(&mut c, postgres::SCOPE, postgres::MIGRATIONS)
                .await
                .map_err(|e| e.to_string())?;
            (
                Arc::new(PgKeys::new(pool.clone(), timing)),
                Db::Postgres(pool),
            )
        }
    };
    let provider = Provider::new(&need("--provider")?)?;
    let secret = Fingerprinter::new(need("--secret")?.as_bytes())?;
    let idem = Idempotency::new("POST /orders", store, secret);
    let idem = match args.iter().any(|a| a == "--provider-dedups") {
        true => idem.provider_deduplicates(),
        false => idem,
    };
    tokio::spawn(
        idem.clone()
            .reaper(AskProvider(provider.clone()), timing.lock_timeout() / 2),
    );
    // #endregion setup
    let app = App {
        idem,
        provider,
        db,
        pause_after_provider: ms("--pause-after-provider-ms").map_err(|e| e.to_string())?,
    };
    let router = Router::new()
        .route("/orders", post(place_order).get(list_orders))
        .route("/bare/orders", post(place_order_bare))
        .with_state(app);
    let addr = arg(&args, "--addr").unwrap_or("127.0.0.1:0".into());
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "listening on http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    Ok(axum::serve(listener, router).await?)
}
