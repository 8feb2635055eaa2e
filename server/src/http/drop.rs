//! A response that is no response: the `drop-after-commit` and
//! `drop-before-commit` faults close the connection with nothing sent, which
//! an axum handler cannot express; the accept loop turns this marker into a
//! closed connection.

use axum::body::Body;
use axum::http::Response;

/// Response extension: close the connection instead of answering.
#[derive(Debug, Clone, Copy)]
pub struct DropConnection;

impl DropConnection {
    /// A response that closes its connection with nothing sent.
    pub fn response() -> Response<Body> {
        let mut r = Response::new(Body::empty());
        r.extensions_mut().insert(DropConnection);
        r
    }
}
