//! The accept loop: hyper HTTP/1.1 connections around the axum router, with
//! graceful shutdown.
//!
//! hyper reads and frames every request, with the limits of `limits` set on
//! its `http1::Builder`: a head must arrive within [`HEAD_TIMEOUT`], fit in
//! [`MAX_HEAD_LEN`] and hold at most [`MAX_HEADERS`] fields; broken framing
//! gets hyper's own refusal (400, 414 or 431 with an empty body) and a
//! closed connection. The router is served with the rules of `rules` around
//! it, over a [`Socket`] that cuts stalled writes and closes lingering. At most
//! [`max_connections`] are open at once, below the open-file limit, so a
//! crowd of stalled clients makes new ones wait in the backlog instead of
//! making `accept` fail; when it fails anyway (EMFILE, ENFILE), the loop
//! backs off, doubling the pause, instead of spinning.
//!
//! `axum::serve` would do, except for one fault: `drop-after-commit` must close
//! the connection with no response at all, which an axum handler cannot
//! express. Here a response carrying the [`DropConnection`] marker becomes a
//! service error, and hyper closes the connection without writing anything.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use crate::http::drop::DropConnection;
use crate::http::limits::{
    max_connections, ACCEPT_BACKOFF, HEAD_TIMEOUT, MAX_HEADERS, MAX_HEAD_LEN,
};
use crate::http::rules;
use crate::http::socket::Socket;

#[derive(Debug, thiserror::Error)]
#[error("connection dropped on purpose (drop-after-commit fault)")]
struct Dropped;

/// How long in-flight requests get to finish after a shutdown signal.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` until `shutdown` resolves, then lets open
/// connections finish (up to [`DRAIN_TIMEOUT`]).
///
/// `keep_alive` is off under `--faults`: Chromium silently re-sends a POST
/// whose reused keep-alive connection closed without an answer, which would
/// hide a dropped response from the page (and from the client's retry logic
/// that the demo and tests exist to show). A fresh connection per request
/// lets the drop reach `fetch` as the network error a real outage produces.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    keep_alive: bool,
    shutdown: impl Future<Output = ()>,
) {
    let app = rules::apply(app);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    let limit = max_connections();
    let slots = Arc::new(Semaphore::new(limit));
    tracing::info!(max_connections = limit, "serving");
    let mut backoff = ACCEPT_BACKOFF.0;
    let mut warned_full: Option<tokio::time::Instant> = None;
    loop {
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                // Once a minute at most: a crowd at the limit must not flood the log.
                if warned_full.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
                    warned_full = Some(tokio::time::Instant::now());
                    tracing::warn!(
                        max_connections = limit,
                        "connection limit reached: new connections wait"
                    );
                }
                tokio::select! {
                    slot = slots.clone().acquire_owned() => match slot {
                        Ok(slot) => slot,
                        Err(_) => break,
                    },
                    () = &mut shutdown => break,
                }
            }
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    backoff = ACCEPT_BACKOFF.0;
                    tracing::trace!(%peer, "connection accepted");
                    stream
                }
                Err(e) => {
                    // EMFILE and friends: wait for descriptors to free up,
                    // longer each time it fails again.
                    if backoff == ACCEPT_BACKOFF.0 {
                        tracing::warn!(error = %e, "accept failed; backing off");
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(ACCEPT_BACKOFF.1);
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
            let app = app.clone();
            async move {
                let resp: Response<Body> = match app.oneshot(req.map(Body::new)).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                if resp.extensions().get::<DropConnection>().is_some() {
                    return Err(Dropped);
                }
                Ok::<_, Dropped>(resp)
            }
        });
        // A client may shut its write side once its request is sent and still
        // wait for the answer (half_close).
        let conn = hyper::server::conn::http1::Builder::new()
            .keep_alive(keep_alive)
            .half_close(true)
            .max_headers(MAX_HEADERS)
            .max_buf_size(MAX_HEAD_LEN)
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_TIMEOUT)
            .serve_connection(TokioIo::new(Socket::new(stream)), svc);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            match conn.await {
                Ok(()) => tracing::trace!("connection closed"),
                Err(e) => tracing::debug!(error = %e, "connection ended with an error"),
            }
            drop(slot);
        });
    }
    drop(listener);
    tracing::info!("shutting down: waiting for open connections");
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections closed"),
        () = tokio::time::sleep(DRAIN_TIMEOUT) => tracing::warn!("connections still open after the drain timeout"),
    }
}
