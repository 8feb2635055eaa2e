//! The payment provider the shop calls: a stand-in for a real one, in its own
//! process. `POST /payments` with an `Idempotency-Key` pays once per key (a
//! second call answers the first payment); `GET /payments/{key}` tells what
//! was paid under a key; `GET /stats` counts calls and payments.
//!
//! `provider --addr 127.0.0.1:0` prints `listening on http://ADDR`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

#[derive(Default)]
struct Ledger {
    calls: u64,
    payments: HashMap<String, Value>,
}

type Shared = Arc<Mutex<Ledger>>;

async fn pay(
    State(l): State<Shared>,
    h: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let Some(key) = h.get("idempotency-key").and_then(|v| v.to_str().ok()) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({ "error": "Idempotency-Key required" })),
        );
    };
    let mut l = l.lock().unwrap_or_else(|e| e.into_inner());
    l.calls += 1;
    let n = l.payments.len() + 1;
    let payment = l.payments.entry(key.to_string()).or_insert_with(
        || json!({ "id": format!("pay_{n}"), "key": key, "amount": body["amount"] }),
    );
    (StatusCode::OK, Json(payment.clone()))
}

async fn find(State(l): State<Shared>, Path(key): Path<String>) -> Result<Json<Value>, StatusCode> {
    let l = l.lock().unwrap_or_else(|e| e.into_inner());
    l.payments
        .get(&key)
        .cloned()
        .map(Json)
        .ok_or(StatusCode::NOT_FOUND)
}

async fn stats(State(l): State<Shared>) -> Json<Value> {
    let l = l.lock().unwrap_or_else(|e| e.into_inner());
    Json(json!({ "calls": l.calls, "payments": l.payments.len() }))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let addr = args
        .iter()
        .position(|a| a == "--addr")
        .and_then(|i| args.get(i + 1));
    let listener = tokio::net::TcpListener::bind(addr.map_or("127.0.0.1:0", |a| a.as_str()))
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "listening on http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let app = Router::new()
        .route("/payments", post(pay))
        .route("/payments/{key}", get(find))
        .route("/stats", get(stats))
        .with_state(Shared::default());
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}
