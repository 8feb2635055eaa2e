//! The HTTP layer: routes, request extractors (headers, bodies), problem+json
//! errors and the accept loop. It knows HTTP; it knows nothing of SQL.

pub mod accept;
pub mod body;
pub mod charges;
pub mod chunked;
pub mod guard;
pub mod head;
pub mod headers;
pub mod json;
pub mod limits;
pub mod problem;
pub mod receipts;
pub mod routes;
