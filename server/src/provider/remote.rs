//! The client of `idemkey-server provider` (`--provider-url`): one HTTP/1.1
//! request per call on a fresh loopback connection, each bounded in time.
//! Phase 2 passes the client's key on in `Idempotency-Key`.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{header, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

use super::{Payment, PaymentRequest, ProviderError, Recorded, Stats};

/// Longest a call may take (the stand-in's latency included).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The service at one base URL; cheap to clone.
#[derive(Debug, Clone)]
pub struct Remote {
    authority: String,
}

fn err(e: impl std::fmt::Display) -> ProviderError {
    ProviderError(e.to_string())
}

impl Remote {
    /// `http://HOST:PORT` of the service.
    pub fn new(url: &str) -> Result<Remote, String> {
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("--provider-url `{url}`: {e}"))?;
        if uri.scheme_str() != Some("http") {
            return Err(format!("--provider-url `{url}`: only http:// is supported"));
        }
        let authority = uri
            .authority()
            .filter(|a| a.port_u16().is_some())
            .ok_or_else(|| format!("--provider-url `{url}` needs a host and a port"))?
            .to_string();
        Ok(Remote { authority })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        customer: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Result<(StatusCode, Value), ProviderError> {
        let fut = async {
            let stream = tokio::net::TcpStream::connect(&self.authority)
                .await
                .map_err(err)?;
            let _ = stream.set_nodelay(true);
            let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(err)?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            let mut req = Request::builder()
                .method(method)
                .uri(path)
                .header(header::HOST, &self.authority)
                .header("x-customer-id", customer);
            if let Some(k) = key {
                req = req.header("idempotency-key", k);
            }
            let bytes = match body {
                Some(b) => {
                    req = req.header(header::CONTENT_TYPE, "application/json");
                    Bytes::from(serde_json::to_vec(&b).map_err(err)?)
                }
                None => Bytes::new(),
            };
            let resp = send
                .send_request(req.body(Full::new(bytes)).map_err(err)?)
                .await
                .map_err(err)?;
            let status = resp.status();
            let body = resp.into_body().collect().await.map_err(err)?.to_bytes();
            let v: Value = serde_json::from_slice(&body)
                .map_err(|e| err(format!("provider answered {status} with no JSON: {e}")))?;
            if status.is_server_error() {
                return Err(err(format!("provider answered {status}: {v}")));
            }
            Ok((status, v))
        };
        tokio::time::timeout(CALL_TIMEOUT, fut)
            .await
            .unwrap_or_else(|_| Err(err("the provider did not answer in time")))
    }

    /// `POST /v1/payments` with the key in `Idempotency-Key`.
    pub async fn pay(&self, req: PaymentRequest) -> Result<Payment, ProviderError> {
        let body = json!({ "operation": req.reservation, "amount": req.amount, "currency": req.currency, "card": req.card });
        let (status, v) = self
            .call(
                Method::POST,
                "/v1/payments",
                &req.customer,
                Some(&req.key),
                Some(body),
            )
            .await?;
        if status != StatusCode::OK {
            return Err(err(format!("provider refused the payment ({status}): {v}")));
        }
        payment(&v)
    }

    /// `GET /v1/payments?operation=…`.
    pub async fn find(
        &self,
        customer: String,
        key: String,
        reservation: String,
    ) -> Result<Option<Recorded>, ProviderError> {
        let path = format!("/v1/payments?operation={}", query_escape(&reservation));
        let (status, v) = self
            .call(Method::GET, &path, &customer, Some(&key), None)
            .await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if status != StatusCode::OK {
            return Err(err(format!("provider look-up failed ({status}): {v}")));
        }
        Ok(Some(Recorded {
            payment: payment(&v)?,
            amount: v["amount"].as_u64().ok_or_else(|| err("no amount"))?,
            currency: v["currency"]
                .as_str()
                .ok_or_else(|| err("no currency"))?
                .to_string(),
        }))
    }

    /// `GET /v1/stats`.
    pub async fn stats(&self, customer: String) -> Result<Stats, ProviderError> {
        let (_, v) = self
            .call(Method::GET, "/v1/stats", &customer, None, None)
            .await?;
        Ok(Stats {
            calls: v["calls"].as_i64().ok_or_else(|| err("no calls"))?,
            payments: v["payments"].as_i64().ok_or_else(|| err("no payments"))?,
        })
    }

    /// `DELETE /v1/payments`.
    pub async fn delete_customer(&self, customer: String) -> Result<(), ProviderError> {
        self.call(Method::DELETE, "/v1/payments", &customer, None, None)
            .await
            .map(drop)
    }
}

fn payment(v: &Value) -> Result<Payment, ProviderError> {
    Ok(Payment {
        approved: v["approved"].as_bool().ok_or_else(|| err("no approved"))?,
        reference: v["reference"]
            .as_str()
            .ok_or_else(|| err("no reference"))?
            .to_string(),
    })
}

/// Operation ids are `op_` and hex; anything else is percent-encoded anyway.
fn query_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
