//! The HTTP layer: the accept loop and hyper's settings, the socket's
//! deadlines, the rules over parsed requests, routes, request extractors
//! (headers, bodies) and problem+json errors. hyper alone frames requests;
//! this layer knows HTTP and nothing of SQL.

pub mod accept;
pub mod body;
pub mod charges;
pub mod drop;
pub mod faults;
pub mod headers;
pub mod json;
pub mod limits;
pub mod problem;
pub mod provider_service;
pub mod receipts;
pub mod routes;
pub mod rules;
pub mod socket;
pub mod state;
