//! `POST /api/charges`: the three phases, and the ledger endpoints.
//!
//! Phase 1 reserves the key (or answers replay / 409 / 422). Phase 2 calls the
//! provider outside any transaction, with the same key. Phase 3 commits the
//! charge and the response together. The phases run in a spawned task, so a
//! client that hangs up mid-request does not strand its key in progress: the
//! work still commits and the client's retry gets the replay.

use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::faults::{Fault, FaultMode};
use crate::fingerprint::fingerprint;
use crate::ids::{new_id, now_ms};
use crate::key;
use crate::keys::{self, Completed, Lock, Outcome, ReserveArgs, Reserved, StoredResponse};
use crate::ledger::{self, Charge};
use crate::problem::{problem_body, ApiError, ApiResult, PROBLEM_JSON};
use crate::provider::{Payment, PaymentRequest};
use crate::request::{read_json, validate_charge, ChargeInput};
use crate::serve::DropConnection;
use crate::store::Store;

/// Header marking a replayed answer.
pub const REPLAYED: &str = "idempotent-replayed";

/// The final answer of one request, before after-commit faults apply.
struct Answer {
    response: StoredResponse,
    replayed: bool,
    fault: Option<Fault>,
}

/// `POST /api/charges`.
pub async fn create(State(st): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let customer = match key::customer(&headers) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let idem_key = match key::idempotency_key(&headers) {
        Ok(k) => k,
        Err(e) => {
            tracing::info!(customer, status = 400, "charge refused: {e}");
            return e.into_response();
        }
    };
    let input = match read_json(&headers, body).await.and_then(validate_charge) {
        Ok(i) => i,
        Err(e) => {
            tracing::info!(
                customer,
                key = idem_key,
                status = e.status_code().0.as_u16(),
                "charge refused: {e}"
            );
            return e.into_response();
        }
    };
    let task = tokio::spawn(phases(st, customer.clone(), idem_key.clone(), input));
    let result = task
        .await
        .unwrap_or_else(|e| Err(ApiError::Internal(format!("charge task: {e}"))));
    match result {
        Ok(answer) => {
            tracing::info!(customer, key = idem_key, status = answer.response.status, replayed = answer.replayed,
                fault = ?answer.fault.as_ref().map(|f| f.mode), "charge answered");
            finish(answer).await
        }
        Err(e) => {
            tracing::info!(
                customer,
                key = idem_key,
                status = e.status_code().0.as_u16(),
                replayed = false,
                "charge: {e}"
            );
            e.into_response()
        }
    }
}

async fn phases(
    st: AppState,
    customer: String,
    idem_key: String,
    input: ChargeInput,
) -> ApiResult<Answer> {
    // Phase 1: reserve.
    let args = ReserveArgs {
        customer: customer.clone(),
        key: idem_key.clone(),
        fingerprint: fingerprint(&input.raw),
        now: now_ms(),
        ttl_ms: st.cfg.key_ttl.as_millis() as i64,
        lock_ms: st.cfg.lock_timeout.as_millis() as i64,
    };
    let faults = st.faults.clone();
    let fault_customer = customer.clone();
    let reserved = st
        .store
        .write(move |conn| {
            keys::reserve(conn, &args, || {
                faults.take(&fault_customer, Some(&args.key), &args.fingerprint)
            })
        })
        .await?;
    let lock = match reserved {
        Reserved::Replay(response) => {
            return Ok(Answer {
                response,
                replayed: true,
                fault: None,
            })
        }
        Reserved::Proceed(lock) => lock,
    };
    if lock.recovered {
        tracing::warn!(
            customer,
            key = idem_key,
            "taking over a key whose request died between phases"
        );
    }

    // Phase 2: the provider, outside any transaction, deduplicating on the key.
    let payment = st
        .provider
        .pay(PaymentRequest {
            customer: customer.clone(),
            key: idem_key.clone(),
            reservation: lock.reservation.clone(),
            amount: input.amount,
            currency: input.currency.clone(),
            card: input.card.clone(),
        })
        .await;
    let payment = match payment {
        Ok(p) => p,
        Err(e) => return Err(release(&st.store, &customer, &idem_key, &lock.owner, e).await),
    };
    if lock
        .fault
        .as_ref()
        .is_some_and(|f| f.mode == FaultMode::CrashAfterProvider)
    {
        tracing::error!(
            customer,
            key = idem_key,
            "fault crash-after-provider: aborting the process"
        );
        std::process::abort();
    }

    // Phase 3: charge + stored response + done, in one transaction.
    let completed = complete(
        &st.store,
        &customer,
        &idem_key,
        &lock,
        input.amount,
        &input.currency,
        payment,
    )
    .await?;
    let (response, replayed) = match completed {
        Completed::Stored(response) => (response, false),
        Completed::AlreadyDone(response) => (response, true),
    };
    Ok(Answer {
        response,
        replayed,
        fault: lock.fault,
    })
}

/// Phase 3, shared by a request and the server-side recovery, so a recovered
/// operation stores what its request would have: the provider's answer
/// becomes a charge (answered 201) or a stored 402, committed only if `lock`
/// still owns the key. On any failure but a lost lock the key is handed back
/// at once, not after `--lock-timeout`.
pub async fn complete(
    store: &Store,
    customer: &str,
    idem_key: &str,
    lock: &Lock,
    amount: u64,
    currency: &str,
    payment: Payment,
) -> ApiResult<Completed> {
    let outcome = outcome(
        customer,
        Some(idem_key),
        Some(&lock.reservation),
        amount,
        currency,
        payment,
    );
    let (c, k, l) = (customer.to_string(), idem_key.to_string(), lock.clone());
    match store
        .write(move |conn| keys::complete(conn, &c, &k, &l, outcome))
        .await
    {
        Err(e @ ApiError::InProgress) => Err(e),
        Err(e) => Err(release(store, customer, idem_key, &lock.owner, e).await),
        completed => completed,
    }
}

/// What the provider's answer means: an approved payment is a charge, a
/// declined one a stored 402. `idem_key` and `reservation` are `None` on the
/// naive endpoint.
fn outcome(
    customer: &str,
    idem_key: Option<&str>,
    reservation: Option<&str>,
    amount: u64,
    currency: &str,
    payment: Payment,
) -> Outcome {
    if !payment.approved {
        return Outcome::Answer(declined(idem_key, &payment.reference));
    }
    Outcome::Charge(Charge {
        id: new_id("ch"),
        object: "charge",
        key: idem_key.map(str::to_string),
        customer: customer.to_string(),
        amount,
        currency: currency.to_string(),
        status: "succeeded",
        provider_ref: payment.reference,
        created_at: now_ms(),
        reservation: reservation.map(str::to_string),
    })
}

/// Releases the lock after a failure (best effort) and passes the error on.
async fn release(
    store: &Store,
    customer: &str,
    idem_key: &str,
    owner: &str,
    e: ApiError,
) -> ApiError {
    let (c, k, o) = (
        customer.to_string(),
        idem_key.to_string(),
        owner.to_string(),
    );
    if let Err(re) = store
        .write(move |conn| keys::release(conn, &c, &k, &o))
        .await
    {
        tracing::error!(error = %re, "could not release a key lock; it frees itself after --lock-timeout");
    }
    e
}

/// The stored body of a declined payment.
fn declined(idem_key: Option<&str>, reference: &str) -> StoredResponse {
    let status = StatusCode::PAYMENT_REQUIRED;
    let body = problem_body(
        status,
        "card_declined",
        "Card declined",
        "the card was declined by the payment provider; nothing was charged",
        &[("key", json!(idem_key)), ("provider_ref", json!(reference))],
    );
    StoredResponse {
        status: status.as_u16(),
        content_type: PROBLEM_JSON.into(),
        body,
    }
}

/// Applies after-commit faults and renders the answer.
async fn finish(answer: Answer) -> Response {
    match answer.fault.map(|f| (f.mode, f.delay_ms)) {
        Some((FaultMode::DropAfterCommit, _)) => return DropConnection::response(),
        Some((FaultMode::ErrorAfterCommit, _)) => {
            return ApiError::FaultAfterCommit.into_response()
        }
        Some((FaultMode::DelayAfterCommit, ms)) => {
            tokio::time::sleep(Duration::from_millis(ms)).await
        }
        _ => {}
    }
    let r = &answer.response;
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let ctype = HeaderValue::from_str(&r.content_type)
        .unwrap_or(HeaderValue::from_static("application/json"));
    let mut resp = (status, [(header::CONTENT_TYPE, ctype)], r.body.clone()).into_response();
    if answer.replayed {
        resp.headers_mut()
            .insert(REPLAYED, HeaderValue::from_static("true"));
    }
    resp
}

/// `POST /api/naive/charges` (only with `--faults`): what a server without
/// idempotency does. No key; every request is a new charge.
pub async fn create_naive(State(st): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let result = async {
        let customer = key::customer(&headers)?;
        let input = validate_charge(read_json(&headers, body).await?)?;
        let fault = st.faults.take(&customer, None, &fingerprint(&input.raw));
        if let Some(e) = fault.as_ref().and_then(Fault::before_commit) {
            return Err(e);
        }
        let task = tokio::spawn(async move {
            let payment = st
                .provider
                .pay(PaymentRequest {
                    customer: customer.clone(),
                    key: new_id("naive"),
                    reservation: new_id("op"),
                    amount: input.amount,
                    currency: input.currency.clone(),
                    card: input.card.clone(),
                })
                .await?;
            match outcome(
                &customer,
                None,
                None,
                input.amount,
                &input.currency,
                payment,
            ) {
                Outcome::Answer(declined) => Ok(declined),
                Outcome::Charge(charge) => {
                    let response = StoredResponse::created(&charge)?;
                    st.store
                        .write(move |conn| ledger::insert_alone(conn, &charge))
                        .await?;
                    Ok(response)
                }
            }
        });
        let response = task
            .await
            .unwrap_or_else(|e| Err(ApiError::Internal(format!("naive task: {e}"))))?;
        Ok(Answer {
            response,
            replayed: false,
            fault,
        })
    }
    .await;
    match result {
        Ok(answer) => finish(answer).await,
        Err(e) => e.into_response(),
    }
}

/// `GET /api/charges`: `{ customer, count, charges }`, oldest first.
pub async fn list(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let c = customer.clone();
    let charges = st.store.read(move |conn| ledger::list(conn, &c)).await?;
    Ok(Json(
        json!({ "customer": customer, "count": charges.len(), "charges": charges }),
    ))
}

/// `DELETE /api/charges` (only with `--faults`): empties the customer's ledger,
/// keys and provider records.
pub async fn reset(State(st): State<AppState>, headers: HeaderMap) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let c = customer.clone();
    let (charges, keys) = st
        .store
        .write(move |conn| ledger::delete_customer(conn, &c))
        .await?;
    tracing::info!(customer, charges, keys, "ledger emptied");
    Ok(Json(
        json!({ "customer": customer, "deleted_charges": charges, "deleted_keys": keys }),
    ))
}

/// `GET /api/provider` (only with `--faults`): the provider stand-in's counters
/// for the customer: `{ customer, calls, payments }`.
pub async fn provider_stats(
    State(st): State<AppState>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let customer = key::customer(&headers)?;
    let stats = st.provider.stats(customer.clone()).await?;
    Ok(Json(
        json!({ "customer": customer, "calls": stats.calls, "payments": stats.payments }),
    ))
}
