//! Shared state and the router: which endpoints exist under which flags.

use std::path::Path;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::cli::Cli;
use crate::http::problem::{echo, ApiError};
pub use crate::http::state::AppState;
use crate::http::{charges, faults, receipts};

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

async fn api_not_found(req: Request) -> ApiError {
    ApiError::NotFound(echo(req.uri().path()))
}

/// axum's own 405 has an empty body; clients get problem+json like every other
/// error. axum still adds the `Allow` header to what this returns.
async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::MethodNotAllowed(echo(req.method().as_str()))
}

/// Content types browsers insist on for modules and wasm streaming
/// compilation, whatever the extension table of the static-file crate says.
async fn module_mime(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let mut resp = next.run(req).await;
    let ctype = if path.ends_with(".wasm") {
        Some("application/wasm")
    } else if path.ends_with(".js") || path.ends_with(".mjs") {
        Some("text/javascript")
    } else {
        None
    };
    if let (Some(ct), true) = (ctype, resp.status().is_success()) {
        resp.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    resp
}

/// Serves the files of `dir`, revalidated on every load, with the module
/// content types and, when given, the `Content-Security-Policy` header.
fn files(dir: &Path, csp: Option<HeaderValue>) -> Router {
    Router::new()
        .fallback_service(ServeDir::new(dir))
        .layer(middleware::from_fn(module_mime))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            csp,
        ))
}

/// Header naming the instance that answered (many share one database).
pub const INSTANCE_HEADER: &str = "idemkey-instance";

/// Builds the application for the given flags; every answer names `instance`.
pub fn router(state: AppState, cli: &Cli, instance: &str) -> Result<Router, String> {
    let instance = HeaderValue::from_str(instance)
        .map_err(|_| format!("--instance `{instance}` is not a valid header value"))?;
    let mut app = Router::new().route("/healthz", get(healthz)).route(
        "/api/charges",
        if cli.faults {
            post(charges::create)
                .get(charges::list)
                .delete(charges::reset)
        } else {
            post(charges::create).get(charges::list)
        },
    );
    app = app.route("/api/receipts", get(receipts::list));
    if cli.faults {
        app = app
            .route("/api/faults", post(faults::schedule).get(faults::list))
            .route("/api/naive/charges", post(charges::create_naive))
            .route("/api/provider", get(charges::provider_stats));
    }
    app = app
        .route("/api", any(api_not_found))
        .route("/api/{*rest}", any(api_not_found))
        // After every route: it applies to the routes already added.
        .method_not_allowed_fallback(method_not_allowed);

    let csp = match &cli.csp {
        Some(policy) => Some(
            HeaderValue::from_str(policy)
                .map_err(|_| format!("--csp `{policy}` is not a valid header value"))?,
        ),
        None => None,
    };
    if let Some(pkg) = &cli.pkg {
        app = app.nest_service("/pkg", files(pkg, csp.clone()));
    }
    app = match &cli.static_dir {
        Some(dir) => app.fallback_service(files(dir, csp)),
        None => app.fallback(api_not_found),
    };
    let mut app = app.with_state(state);
    if cli.cors {
        // Mirroring (rather than `*`) keeps credentialed requests working too.
        app = app.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::mirror_request())
                .allow_methods(AllowMethods::mirror_request())
                .allow_headers(AllowHeaders::mirror_request())
                .allow_credentials(true)
                .expose_headers([
                    HeaderName::from_static(charges::REPLAYED),
                    header::RETRY_AFTER,
                    HeaderName::from_static(INSTANCE_HEADER),
                ])
                .max_age(Duration::from_secs(600)),
        );
    }
    Ok(app.layer(SetResponseHeaderLayer::overriding(
        HeaderName::from_static(INSTANCE_HEADER),
        instance,
    )))
}
