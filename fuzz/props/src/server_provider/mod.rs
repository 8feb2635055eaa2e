//! The provider service's HTTP API (`idemkey-server provider`): `POST /v1/payments`,
//! `GET /v1/payments?operation=…`, `GET /v1/stats`, `DELETE /v1/payments`, and any other
//! method or path, driven through its real router with headers, queries and bodies that
//! are valid, nearly valid or garbage.
//!
//! Properties, checked against a model of what the provider recorded: a healthy provider
//! never answers 5xx; a valid payment is answered 200 and paid once per (customer, key,
//! operation), every repeat getting the first answer; a refused request (400, naming what
//! is wrong) records nothing and counts no call; a look-up finds exactly what the first
//! payment recorded, or 404, and never pays; the counters are the model's; a reset
//! forgets the customer's payments; a customer never sees another's.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use arbitrary::Unstructured;
use axum::body::{to_bytes, Body};
use axum::http::{HeaderValue, Method, Request};
use axum::Router;
use idemkey_server::http::headers;
use idemkey_server::http::provider_service as service;
use idemkey_server::provider::DECLINED_CARD;
use serde_json::{json, Value};
use tower::ServiceExt;

mod calls;

use calls::{call, form_encode, Call, OPS};

thread_local! {
    static RT: RefCell<tokio::runtime::Runtime> = RefCell::new(
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"),
    );
}

/// Where the fuzzed provider keeps its SQLite file: tmpfs when there is one (its
/// `synchronous=FULL` commits would otherwise wait for a disk on every payment).
fn base_dir() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() {
        shm
    } else {
        std::env::temp_dir()
    }
}

/// One provider per process, in a directory named after the process; the directories
/// of processes that are gone (libFuzzer exits without cleaning up) are removed first.
fn router() -> &'static Router {
    static ROUTER: OnceLock<Router> = OnceLock::new();
    ROUTER.get_or_init(|| {
        let base = base_dir();
        let prefix = "idemkey-fuzz-provider-";
        for e in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix(prefix) {
                if !PathBuf::from(format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = base.join(format!("{prefix}{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("provider directory");
        let local = service::open(&dir.join("provider.db"), Duration::ZERO).expect("provider");
        service::router(local)
    })
}

/// A customer no other input has used.
fn fresh_customer() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "fz{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// What a valid pay body asks for, as the service must read it.
struct Asked {
    operation: String,
    amount: u64,
    currency: String,
    card: Option<String>,
}

impl Asked {
    /// The values an instance sends: what the service must accept, and nothing else.
    fn acceptable(&self) -> bool {
        let visible =
            |s: &str| (1..=255).contains(&s.len()) && s.bytes().all(|b| (0x21..=0x7e).contains(&b));
        (1..=99_999_999).contains(&self.amount)
            && self.currency.len() == 3
            && self.currency.bytes().all(|b| b.is_ascii_lowercase())
            && visible(&self.operation)
            && self.card.as_ref().is_none_or(|c| {
                (12..=19).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_digit())
            })
    }
}

/// The answer of one request: status and JSON body (`Value::Null` when not JSON).
fn send(
    method: Method,
    uri: &str,
    hs: &[(&str, &Option<Vec<u8>>)],
    body: Vec<u8>,
) -> Option<(u16, Value)> {
    let mut req = Request::builder().method(method).uri(uri);
    for (name, value) in hs {
        if let Some(v) = value {
            // Bytes no header may carry never reach a server: hyper refuses them first.
            let v = HeaderValue::from_bytes(v).ok()?;
            req = req.header(*name, v);
        }
    }
    let req = req
        .header("content-type", "application/json")
        .body(Body::from(body))
        .ok()?;
    let router = router().clone();
    let resp = RT.with(|rt| {
        rt.borrow().block_on(async {
            let resp = router.oneshot(req).await.expect("infallible");
            let status = resp.status().as_u16();
            let bytes = to_bytes(resp.into_body(), 1 << 20).await.expect("body");
            (
                status,
                serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            )
        })
    });
    Some(resp)
}

/// Customer and key as the service must read them, or `None` if it must refuse them.
fn scope(customer: &Option<Vec<u8>>, key: &Option<Vec<u8>>) -> Option<(String, String)> {
    let mut h = axum::http::HeaderMap::new();
    for (n, v) in [("x-customer-id", customer), ("idempotency-key", key)] {
        if let Some(v) = v {
            h.insert(n, HeaderValue::from_bytes(v).ok()?);
        }
    }
    Some((
        headers::customer(&h).ok()?,
        headers::idempotency_key(&h).ok()?,
    ))
}

fn asked(body: &[u8]) -> Option<Asked> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let card = match v.get("card") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return None,
    };
    Some(Asked {
        operation: v.get("operation")?.as_str()?.to_string(),
        amount: v.get("amount")?.as_u64()?,
        currency: v.get("currency")?.as_str()?.to_string(),
        card,
    })
}

fn assert_refusal(status: u16, body: &Value, what: &str) {
    assert_eq!(status, 400, "{what}: {body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{what}: {body}"
    );
}

/// The model: (key, operation) -> (approved, reference, amount, currency), and calls.
#[derive(Default)]
struct Model {
    paid: HashMap<(String, String), (bool, String, u64, String)>,
    calls: i64,
}

/// Runs the calls `data` describes against the service and checks every answer.
pub fn check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let me = fresh_customer();
    let mut model = Model::default();
    for _ in 0..16 {
        let Ok(c) = call(&mut u, &me) else { break };
        match c {
            Call::Pay {
                customer,
                key,
                body,
            } => {
                let hs = [("x-customer-id", &customer), ("idempotency-key", &key)];
                let Some((status, answer)) = send(Method::POST, "/v1/payments", &hs, body.clone())
                else {
                    continue;
                };
                assert!(status < 500, "POST /v1/payments: {status} {answer}");
                let Some((who, k)) = scope(&customer, &key) else {
                    assert_refusal(status, &answer, "a bad customer or key");
                    continue;
                };
                let Some(a) = asked(&body) else {
                    assert_refusal(status, &answer, "a bad body");
                    continue;
                };
                if !a.acceptable() {
                    assert_refusal(status, &answer, "values no instance sends");
                    continue;
                }
                assert_eq!(status, 200, "{answer}");
                let approved = answer["approved"].as_bool().expect("approved");
                let reference = answer["reference"].as_str().expect("reference").to_string();
                assert!(reference.starts_with("pay_"), "{reference}");
                if who != me {
                    continue;
                }
                model.calls += 1;
                let first = model.paid.entry((k, a.operation)).or_insert((
                    a.card.as_deref() != Some(DECLINED_CARD),
                    reference.clone(),
                    a.amount,
                    a.currency,
                ));
                assert_eq!(
                    (approved, &reference),
                    (first.0, &first.1),
                    "a repeat is the first answer"
                );
            }
            Call::Find {
                customer,
                key,
                query,
            } => {
                let hs = [("x-customer-id", &customer), ("idempotency-key", &key)];
                let uri = format!("/v1/payments?{query}");
                if uri.parse::<axum::http::Uri>().is_err() {
                    continue;
                }
                let Some((status, answer)) = send(Method::GET, &uri, &hs, Vec::new()) else {
                    continue;
                };
                assert!(status < 500, "GET {uri}: {status} {answer}");
                let Some((who, k)) = scope(&customer, &key) else {
                    assert_refusal(status, &answer, "a bad customer or key");
                    continue;
                };
                if status == 400 {
                    assert_refusal(status, &answer, "a bad query");
                    continue;
                }
                if who != me {
                    continue;
                }
                let op = OPS
                    .iter()
                    .find(|op| query == format!("operation={}", form_encode(op)));
                let Some(op) = op else { continue };
                match model.paid.get(&(k, op.to_string())) {
                    Some((approved, reference, amount, currency)) => {
                        assert_eq!(status, 200, "{answer}");
                        assert_eq!(
                            answer,
                            json!({ "approved": approved, "reference": reference,
                                    "amount": amount, "currency": currency }),
                        );
                    }
                    None => {
                        assert_eq!(status, 404, "a look-up found what was never paid: {answer}")
                    }
                }
            }
            Call::Stats(customer) => {
                let hs = [("x-customer-id", &customer)];
                let Some((status, answer)) = send(Method::GET, "/v1/stats", &hs, Vec::new()) else {
                    continue;
                };
                assert!(status < 500, "GET /v1/stats: {status} {answer}");
                if scope(&customer, &Some(b"k".to_vec())).is_some_and(|(who, _)| who == me) {
                    assert_eq!(status, 200);
                    assert_eq!(answer["calls"], model.calls, "{answer}");
                    assert_eq!(answer["payments"], model.paid.len(), "{answer}");
                }
            }
            Call::Forget(customer) => {
                let hs = [("x-customer-id", &customer)];
                let Some((status, answer)) = send(Method::DELETE, "/v1/payments", &hs, Vec::new())
                else {
                    continue;
                };
                assert!(status < 500, "DELETE /v1/payments: {status} {answer}");
                if scope(&customer, &Some(b"k".to_vec())).is_some_and(|(who, _)| who == me) {
                    assert_eq!(status, 200);
                    model = Model::default();
                }
            }
            Call::Other { method, path, body } => {
                let (Ok(m), Ok(uri)) =
                    (Method::from_bytes(&method), path.parse::<axum::http::Uri>())
                else {
                    continue;
                };
                let Some((status, answer)) = send(m.clone(), &uri.to_string(), &[], body) else {
                    continue;
                };
                assert!(status < 500, "{m} {uri}: {status} {answer}");
            }
        }
    }
    // Leave nothing behind: the file would grow over a long run.
    let me_header = Some(me.into_bytes());
    send(
        Method::DELETE,
        "/v1/payments",
        &[("x-customer-id", &me_header)],
        Vec::new(),
    );
    send(
        Method::DELETE,
        "/v1/payments",
        &[("x-customer-id", &Some(b"someone-else".to_vec()))],
        Vec::new(),
    );
}
