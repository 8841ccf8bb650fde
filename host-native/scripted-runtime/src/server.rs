//! HTTP plumbing: the accept loop, authentication and routing, plus the small
//! side endpoints (`/health`, `/iac-code/session/ensure-restored`).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::sse::Body;
use crate::{pipeline_state, rpc, Shared};

/// Largest request body accepted (images travel inline in A2A messages).
const MAX_BODY: usize = 16 * 1024 * 1024;

pub(crate) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let shared = Arc::clone(&shared);
                connections.spawn(async move {
                    let service = service_fn(move |req| {
                        let shared = Arc::clone(&shared);
                        async move { Ok::<_, Infallible>(handle(shared, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                while connections.try_join_next().is_some() {}
            }
            _ = stop.changed() => break,
        }
    }
    connections.abort_all();
    // Runs that hold (cancel, side-band waits) would otherwise outlive us.
    let store = shared.lock();
    for run in store.tasks.values().filter_map(|r| r.run.as_ref()) {
        if let Some(abort) = &run.abort {
            abort.abort();
        }
    }
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    if let Some(token) = &shared.config.token {
        if !authorized(req.headers().get(header::AUTHORIZATION), token) {
            return json_response(
                StatusCode::UNAUTHORIZED,
                &json!({ "error": "Unauthorized" }),
            );
        }
    }
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let version = req
        .headers()
        .get("a2a-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match (&method, path.as_str()) {
        (&Method::GET, "/health") => json_response(
            StatusCode::OK,
            &json!({ "status": "healthy", "version": "0.16.0", "mode": "normal", "runtime": "scripted" }),
        ),
        (&Method::GET, "/iac-code/pipeline/state") => {
            let (status, body) = pipeline_state::handle(&shared, &query);
            json_response(status, &body)
        }
        (&Method::POST, "/") | (&Method::POST, "/iac-code/session/ensure-restored") => {
            let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(_) => {
                    return json_response(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &json!({ "error": "Request body too large" }),
                    )
                }
            };
            if path == "/" {
                rpc::handle(&shared, version.as_deref(), &body).await
            } else {
                let (status, body) = ensure_restored(&shared, &body);
                json_response(status, &body)
            }
        }
        _ => json_response(StatusCode::NOT_FOUND, &json!({ "detail": "Not Found" })),
    }
}

/// `Authorization: Bearer <token>`, prefix case-sensitive, compared in
/// constant time so that response timing does not leak the token.
fn authorized(header: Option<&http::HeaderValue>, token: &str) -> bool {
    let Some(value) = header.map(http::HeaderValue::as_bytes) else {
        return false;
    };
    let Some(given) = value.strip_prefix(b"Bearer ") else {
        return false;
    };
    let expected = token.as_bytes();
    let mut diff = given.len() ^ expected.len();
    for (i, e) in expected.iter().enumerate() {
        diff |= usize::from(given.get(i).copied().unwrap_or(0) ^ e);
    }
    diff == 0
}

/// `POST /iac-code/session/ensure-restored` (A2A-WIRE §6.2).
fn ensure_restored(shared: &Shared, body: &Bytes) -> (StatusCode, Value) {
    let invalid = (
        StatusCode::BAD_REQUEST,
        json!({ "error": "Invalid session restore request." }),
    );
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else {
        return invalid;
    };
    let Some(Value::String(_cwd)) = request.get("cwd") else {
        return invalid;
    };
    let Some(session) = request
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|s| is_protocol_id(s))
    else {
        return invalid;
    };
    match request.get("taskId") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if is_protocol_id(t) => {}
        Some(_) => return invalid,
    }
    let mut store = shared.lock();
    let Some(context) = store.contexts.values_mut().find(|c| c.session == session) else {
        return (StatusCode::NOT_FOUND, json!({ "status": "not_found" }));
    };
    if context.restore_holds > 0 {
        context.restore_holds -= 1;
        return (
            StatusCode::CONFLICT,
            json!({ "error": {
                "code": "SESSION_BACKUP_NOT_READY",
                "message": "Session backup is still synchronizing. Retry after 3 seconds.",
                "retryable": true
            }}),
        );
    }
    (StatusCode::OK, json!({ "status": "current" }))
}

/// Ids the runtime accepts: `^[A-Za-z0-9_.:-]{1,128}$`.
pub(crate) fn is_protocol_id(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// A JSON response with the compact, non-ASCII-preserving encoding of the
/// real runtime.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    let mut response = Response::new(Body::full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_prefix_is_case_sensitive() {
        let ok = http::HeaderValue::from_static("Bearer s3cret");
        let lower = http::HeaderValue::from_static("bearer s3cret");
        let wrong = http::HeaderValue::from_static("Bearer s3cre");
        assert!(authorized(Some(&ok), "s3cret"));
        assert!(!authorized(Some(&lower), "s3cret"));
        assert!(!authorized(Some(&wrong), "s3cret"));
        assert!(!authorized(None, "s3cret"));
    }

    #[test]
    fn protocol_ids() {
        assert!(is_protocol_id("agui-0b72a7eb"));
        assert!(!is_protocol_id(""));
        assert!(!is_protocol_id("a b"));
        assert!(!is_protocol_id(&"a".repeat(129)));
    }
}
