//! The shop's client of the payment provider (`src/bin/provider.rs`), over
//! HTTP/1.1 with hyper: one connection per call.

use axum::body::Bytes;
use axum::http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

/// Why a payment was not made.
#[derive(Debug)]
pub enum Refused {
    /// The provider could not be reached, or answered an error.
    Failed(String),
    /// The key's payment at the provider is of this other amount.
    OtherAmount(i64),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Failed(e) => f.write_str(e),
            Refused::OtherAmount(paid) => write!(
                f,
                "this key already paid {paid} at the provider, another amount"
            ),
        }
    }
}

/// Where the provider listens (`None`: `make bench`'s provider, which
/// answers at once and remembers nothing); cheap to clone.
#[derive(Clone)]
pub struct Provider {
    addr: Option<String>,
}

impl Provider {
    /// The provider at `url` (`http://HOST:PORT`), or `instant`.
    pub fn new(url: &str) -> Result<Provider, String> {
        if url == "instant" {
            return Ok(Provider { addr: None });
        }
        let addr = url
            .strip_prefix("http://")
            .ok_or("--provider: http://HOST:PORT or instant")?;
        Ok(Provider {
            addr: Some(addr.trim_end_matches('/').to_string()),
        })
    }

    /// Pays `amount` under `key` (a second call with the key answers the
    /// first payment); the payment's id. A first payment of another amount
    /// under the key (a retry with another payload after a crash, which the
    /// shop had nothing stored to compare with) is [`Refused::OtherAmount`].
    pub async fn pay(&self, key: &str, amount: i64) -> Result<String, Refused> {
        let Some(addr) = &self.addr else {
            return Ok(format!("pay_{key}"));
        };
        let (status, body) = Self::call(
            addr,
            Method::POST,
            "/payments",
            Some(key),
            json!({ "amount": amount }),
        )
        .await?;
        match (status, body["id"].as_str(), body["amount"].as_i64()) {
            (StatusCode::OK, Some(id), Some(paid)) if paid == amount => Ok(id.to_string()),
            (StatusCode::OK, Some(_), Some(paid)) => Err(Refused::OtherAmount(paid)),
            _ => Err(Refused::Failed(format!("provider answered {status}"))),
        }
    }

    /// The payment made under `key`, with its amount, if any.
    pub async fn find(&self, key: &str) -> Result<Option<(String, i64)>, String> {
        let Some(addr) = &self.addr else {
            return Ok(None);
        };
        let (status, body) = Self::call(
            addr,
            Method::GET,
            &format!("/payments/{key}"),
            None,
            Value::Null,
        )
        .await
        .map_err(|e| e.to_string())?;
        match (status, body["id"].as_str(), body["amount"].as_i64()) {
            (StatusCode::OK, Some(id), Some(amount)) => Ok(Some((id.to_string(), amount))),
            (StatusCode::NOT_FOUND, ..) => Ok(None),
            _ => Err(format!("provider answered {status}")),
        }
    }

    async fn call(
        addr: &str,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Value,
    ) -> Result<(StatusCode, Value), Refused> {
        Self::exchange(addr, method, path, key, body)
            .await
            .map_err(Refused::Failed)
    }

    async fn exchange(
        addr: &str,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Value,
    ) -> Result<(StatusCode, Value), String> {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("provider: {e}"))?;
        let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("provider: {e}"))?;
        tokio::spawn(conn);
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", addr);
        if let Some(key) = key {
            req = req
                .header("idempotency-key", key)
                .header("content-type", "application/json");
        }
        let req = req
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())?;
        let resp = send
            .send_request(req)
            .await
            .map_err(|e| format!("provider: {e}"))?;
        let status = resp.status();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("provider: {e}"))?
            .to_bytes();
        Ok((
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        ))
    }
}
