//! The HTTP routes (SPEC §1, §9, §12), callable without a socket.
//!
//! [`handle`] takes any request whose body yields `Bytes`, so tests pass a
//! `Full` body and the server passes hyper's `Incoming`. Checks run in a fixed
//! order that never reads a body it will refuse: CORS preflight, then auth
//! (before the body), media type, Accept, and the body itself bounded while
//! it streams in (a lying or missing Content-Length cannot get past it).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use iac_agui_core::validate::{
    self, ValidatedRun, WorkspaceVerdict, MAX_CANCEL_BODY_BYTES, MAX_RUN_BODY_BYTES,
};
use iac_agui_core::{i18n, ErrorCode, Language, MessageKey, ProtocolError};
use serde_json::{json, Value};

use crate::app::App;
use crate::demo;
use crate::engine::Admission;
use crate::loops::Home;
use crate::secret::constant_time_eq;

/// The body type of every response.
pub type ResponseBody = BoxBody<Bytes, Infallible>;

/// The AG-UI protocol version this server speaks (AGUI.md).
pub const AGUI_PROTOCOL_VERSION: &str = "0.1.20";

/// Path prefix of the cancel extension.
pub const CANCEL_PREFIX: &str = "/extensions/iac-code/v1/executions/";

/// Answers one request and logs one line for it.
pub async fn handle<B>(app: Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let mut response = respond(app, req).await;
    match Deferred::take(&mut response) {
        Some((_, answer)) => answer.await,
        None => response,
    }
}

/// [`handle`], but a run to be admitted on another event loop comes back
/// as a [`Deferred`] answer, for the connection to make there.
pub(crate) async fn respond<B>(app: Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .filter(|o| origin_allowed(&app, o))
        .cloned();
    let finish = move |mut response: Response<ResponseBody>| {
        if let Some(origin) = origin {
            let headers = response.headers_mut();
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            headers.append(header::VARY, HeaderValue::from_static("Origin"));
        }
        let code = response
            .extensions()
            .get::<LoggedCode>()
            .map_or("", |c| c.0.as_str());
        tracing::info!(
            target: "iac_agui::http",
            %method,
            path = %loggable_path(&path),
            status = response.status().as_u16(),
            code,
            duration_ms = started.elapsed().as_millis() as u64,
            "request"
        );
        response
    };
    let mut response = route(&app, req).await;
    match Deferred::take(&mut response) {
        Some((home, answer)) => Deferred::response(home, async move { finish(answer.await) }),
        None => finish(response),
    }
}

/// An answer to be made on another event loop: the connection moves to
/// `home` and awaits it there (`server::serve_connection`). A run is
/// admitted on its thread's loop, where the engine answers it, so its
/// connection crosses between loops once, before its admission, and not
/// back and forth around it.
#[derive(Clone)]
pub(crate) struct Deferred {
    home: Home,
    /// Shared and locked only because a response's extensions must be
    /// `Clone` and `Sync`; it is taken once.
    answer: Arc<Mutex<Option<Answer>>>,
}

/// A response still to be made.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Response<ResponseBody>> + Send>>;

impl Deferred {
    /// A placeholder response that carries `answer` to `home`.
    fn response(
        home: Home,
        answer: impl Future<Output = Response<ResponseBody>> + Send + 'static,
    ) -> Response<ResponseBody> {
        let mut response = empty(StatusCode::OK);
        response.extensions_mut().insert(Deferred {
            home,
            answer: Arc::new(Mutex::new(Some(Box::pin(answer)))),
        });
        response
    }

    /// The loop and the answer a placeholder response carries, if it is one.
    pub(crate) fn take(response: &mut Response<ResponseBody>) -> Option<(Home, Answer)> {
        let deferred = response.extensions_mut().remove::<Deferred>()?;
        let answer = crate::locked(&deferred.answer).take()?;
        Some((deferred.home, answer))
    }
}

async fn route<B>(app: &Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let path = req.uri().path();
    if let Some(dir) = app
        .http
        .demo_dir
        .as_deref()
        .filter(|_| demo::is_demo_path(path))
    {
        return demo::respond(dir, req.method(), path, req.uri().query()).await;
    }
    if req.method() == Method::OPTIONS {
        return preflight(app, req.headers());
    }
    match (req.method(), path) {
        (&Method::GET, "/health") => json_response(StatusCode::OK, &health()),
        (&Method::POST, "/") => run(app, req).await,
        (&Method::POST, p) if execution_id(p).is_some() => cancel(app, req).await,
        (_, "/health" | "/") => empty(StatusCode::METHOD_NOT_ALLOWED),
        (_, p) if execution_id(p).is_some() => empty(StatusCode::METHOD_NOT_ALLOWED),
        _ => empty(StatusCode::NOT_FOUND),
    }
}

/// The `/health` document.
pub fn health() -> Value {
    json!({
        "status": "ok",
        "protocol": "ag-ui",
        "protocolPackageVersion": AGUI_PROTOCOL_VERSION,
        "executionKernel": "a2a-1.0",
        "serverVersion": env!("CARGO_PKG_VERSION"),
    })
}

/// A JSON error envelope response.
pub fn error_response(error: &ProtocolError, language: Language) -> Response<ResponseBody> {
    let status = StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    envelope_response(status, &error.envelope(language))
}

/// The error code of a response, for its log line.
#[derive(Debug, Clone)]
struct LoggedCode(String);

/// A JSON response whose `error.code` (if any) is logged with the request.
fn envelope_response(status: StatusCode, body: &Value) -> Response<ResponseBody> {
    let mut response = json_response(status, body);
    if let Some(code) = body.pointer("/error/code").and_then(Value::as_str) {
        response
            .extensions_mut()
            .insert(LoggedCode(code.to_owned()));
    }
    response
}

async fn run<B>(app: &Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let (parts, body) = req.into_parts();
    let accept_language = header_str(&parts.headers, header::ACCEPT_LANGUAGE).map(str::to_owned);
    let header_language = i18n::negotiate(None, accept_language.as_deref());
    let bytes = match checked_body(app, &parts.headers, body, MAX_RUN_BODY_BYTES, true).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let large = bytes.len() > OFFLOAD_BYTES;
    let check = move || {
        let value = validate::parse_body(&bytes).map_err(|e| (e, header_language))?;
        let language = validate::request_language(&value, accept_language.as_deref());
        validate::validate_run(&value, accept_language.as_deref())
            .map(|validated| (validated, language))
            .map_err(|e| (e, language))
    };
    // A body of megabytes (inline images) takes tens of milliseconds to
    // parse and check: not on a worker that relays other runs' events.
    let checked = if large {
        tokio::task::spawn_blocking(check)
            .await
            .unwrap_or_else(|_| {
                Err((
                    ProtocolError::new(ErrorCode::InvalidJson, MessageKey::InvalidJson),
                    header_language,
                ))
            })
    } else {
        check()
    };
    let (mut validated, language) = match checked {
        Ok(checked) => checked,
        Err((error, language)) => return error_response(&error, language),
    };
    let cwd = match app
        .workspace
        .resolve(&validated.iac.cwd, |k| std::env::var_os(k))
    {
        WorkspaceVerdict::Resolved(cwd) => cwd,
        WorkspaceVerdict::Rejected(error) => return error_response(&error, language),
    };
    let images = validated
        .user_message
        .as_ref()
        .is_some_and(|m| m.parts.iter().any(crate::images::is_image));
    // Decoding and re-encoding images is slow: not on the event loop. A
    // message without images has nothing to normalise.
    if let Some(message) = validated.user_message.take_if(|_| images) {
        let normalised = tokio::task::spawn_blocking(move || {
            let mut message = message;
            crate::images::normalise_parts(&mut message.parts).map(|()| message)
        })
        .await;
        match normalised {
            Ok(Ok(message)) => validated.user_message = Some(message),
            Ok(Err(error)) => return error_response(&error, language),
            Err(_) => {
                let error = ProtocolError::new(ErrorCode::InvalidInput, MessageKey::InvalidImage);
                return error_response(&error, language);
            }
        }
    }
    if app.is_shutting_down() {
        let error = ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::ShuttingDown);
        return error_response(&error, language);
    }
    if !app.has_room() {
        // Refused before its thread is read: the runs already admitted
        // keep the descriptors they will need (app::DescriptorBudget).
        tracing::warn!("open descriptor budget reached: run refused");
        let error = ProtocolError::new(ErrorCode::StateUnavailable, MessageKey::StateUnavailable);
        let mut response = error_response(&error, language);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    }
    let home = app
        .engine
        .home(&validated.input.thread_id)
        .filter(|home| !home.is_current())
        .cloned();
    let admission = admit(Arc::clone(app), validated, cwd, language);
    match home {
        Some(home) => Deferred::response(home, admission),
        None => admission.await,
    }
}

/// Admits a checked run: its thread's document is read and the engine
/// decides.
async fn admit(
    app: Arc<App>,
    validated: ValidatedRun,
    cwd: String,
    language: Language,
) -> Response<ResponseBody> {
    let load = crate::engine::load(&app.store, &validated.input.thread_id).await;
    match app.engine.run(validated, cwd, load).await {
        Admission::Stream(body, home) => {
            let mut response = Response::new(body.boxed());
            if let Some(home) = home {
                response.extensions_mut().insert(home);
            }
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
            response
        }
        Admission::Refused { status, body } => envelope_response(
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            &body,
        ),
        Admission::Unavailable => {
            let error = ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::ShuttingDown);
            error_response(&error, language)
        }
    }
}

/// Request bodies larger than this are parsed and checked on a blocking
/// thread.
const OFFLOAD_BYTES: usize = 64 * 1024;

/// [`checked_body`], then JSON.
async fn json_body<B>(
    app: &Arc<App>,
    headers: &HeaderMap,
    body: B,
    limit: usize,
    streams: bool,
) -> Result<Value, Response<ResponseBody>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let language = i18n::negotiate(None, header_str(headers, header::ACCEPT_LANGUAGE));
    let body = checked_body(app, headers, body, limit, streams).await?;
    validate::parse_body(&body).map_err(|error| error_response(&error, language))
}

/// What both `POST` routes check before they look at the body's meaning
/// (SPEC §1): auth before the body is read, the media types, and the size
/// limit while reading. A refusal is the finished error response.
async fn checked_body<B>(
    app: &Arc<App>,
    headers: &HeaderMap,
    body: B,
    limit: usize,
    streams: bool,
) -> Result<Bytes, Response<ResponseBody>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let language = i18n::negotiate(None, header_str(headers, header::ACCEPT_LANGUAGE));
    precheck(app, headers, streams).map_err(|error| error_response(&error, language))?;
    match read_body(app, headers, body, limit).await {
        Ok(body) => Ok(body),
        Err(BodyFailure::Refused(error)) => Err(error_response(&error, language)),
        Err(BodyFailure::TimedOut) => Err(empty(StatusCode::REQUEST_TIMEOUT)),
    }
}

async fn cancel<B>(app: &Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let (parts, body) = req.into_parts();
    let accept_language = header_str(&parts.headers, header::ACCEPT_LANGUAGE);
    let language = i18n::negotiate(None, accept_language);
    let value = match json_body(app, &parts.headers, body, MAX_CANCEL_BODY_BYTES, false).await {
        Ok(value) => value,
        Err(response) => return response,
    };
    let field = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let (Some(thread_id), Some(ros_invocation_id)) = (field("threadId"), field("rosInvocationId"))
    else {
        let error = ProtocolError::new(ErrorCode::InvalidInput, MessageKey::InvalidCancelRequest);
        return error_response(&error, language);
    };
    let execution_id = execution_id(parts.uri.path())
        .unwrap_or_default()
        .to_owned();
    let load = crate::engine::load(&app.store, &thread_id).await;
    match app
        .engine
        .cancel(
            &execution_id,
            &thread_id,
            &ros_invocation_id,
            language,
            load,
        )
        .await
    {
        Some((status, body)) => envelope_response(
            StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
            &body,
        ),
        None => {
            let error = ProtocolError::new(ErrorCode::A2aUnavailable, MessageKey::ShuttingDown);
            error_response(&error, language)
        }
    }
}

/// Auth, media type and (for runs) Accept: everything decided from headers.
fn precheck(app: &App, headers: &HeaderMap, needs_sse: bool) -> Result<(), ProtocolError> {
    if let Some(expected) = &app.http.auth_token {
        if !authorized(headers, expected.expose()) {
            return Err(ProtocolError::new(
                ErrorCode::Unauthorized,
                MessageKey::Unauthorized,
            ));
        }
    }
    let media_type = header_str(headers, header::CONTENT_TYPE)
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    if media_type.as_deref() != Some("application/json") {
        return Err(ProtocolError::new(
            ErrorCode::UnsupportedMediaType,
            MessageKey::UnsupportedMediaType,
        ));
    }
    if needs_sse && !accepts_event_stream(headers) {
        return Err(ProtocolError::new(
            ErrorCode::NotAcceptable,
            MessageKey::NotAcceptable,
        ));
    }
    Ok(())
}

/// `Authorization: Bearer <token>`, scheme case-insensitive, token compared
/// in constant time.
fn authorized(headers: &HeaderMap, expected: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes)
    else {
        return false;
    };
    let Some(space) = value.iter().position(|&b| b == b' ') else {
        return false;
    };
    let (scheme, token) = (&value[..space], &value[space + 1..]);
    scheme.eq_ignore_ascii_case(b"bearer") && constant_time_eq(token, expected.as_bytes())
}

/// True unless Accept rules out `text/event-stream` (absent, `*/*` and
/// `text/*` are fine; q=0 excludes a range).
fn accepts_event_stream(headers: &HeaderMap) -> bool {
    let values: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return true;
    }
    values.iter().flat_map(|v| v.split(',')).any(|range| {
        let mut pieces = range.split(';');
        let media = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = pieces
            .filter_map(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .or_else(|| p.trim().strip_prefix("Q="))
            })
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .next()
            .unwrap_or(1.0);
        q > 0.0 && matches!(media.as_str(), "text/event-stream" | "text/*" | "*/*")
    })
}

enum BodyFailure {
    Refused(ProtocolError),
    TimedOut,
}

/// Reads a body of at most `limit` bytes: a declared length over the limit
/// is refused before reading, and the running total is enforced while the
/// bytes arrive, so nothing past the limit is ever buffered.
async fn read_body<B>(
    app: &App,
    headers: &HeaderMap,
    body: B,
    limit: usize,
) -> Result<Bytes, BodyFailure>
where
    B: Body<Data = Bytes>,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let too_large = || {
        BodyFailure::Refused(ProtocolError::new(
            ErrorCode::RequestTooLarge,
            MessageKey::RequestTooLarge,
        ))
    };
    let declared =
        header_str(headers, header::CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let collected =
        tokio::time::timeout(app.http.body_timeout, Limited::new(body, limit).collect()).await;
    match collected {
        Err(_) => Err(BodyFailure::TimedOut),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<LengthLimitError>() => Err(too_large()),
        // A body that broke off mid-way is not JSON.
        Ok(Err(_)) => Err(BodyFailure::Refused(ProtocolError::new(
            ErrorCode::InvalidJson,
            MessageKey::InvalidJson,
        ))),
    }
}

fn preflight(app: &App, headers: &HeaderMap) -> Response<ResponseBody> {
    let allowed = headers
        .get(header::ORIGIN)
        .is_some_and(|origin| origin_allowed(app, origin));
    if !allowed {
        return empty(if app.http.cors_origins.is_empty() {
            StatusCode::METHOD_NOT_ALLOWED
        } else {
            StatusCode::FORBIDDEN
        });
    }
    let mut response = empty(StatusCode::NO_CONTENT);
    let h = response.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Authorization, Content-Type, Accept, Accept-Language"),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    response
}

fn origin_allowed(app: &App, origin: &HeaderValue) -> bool {
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    app.http
        .cors_origins
        .iter()
        .any(|allowed| allowed == "*" || allowed.eq_ignore_ascii_case(origin))
}

fn execution_id(path: &str) -> Option<&str> {
    let id = path.strip_prefix(CANCEL_PREFIX)?.strip_suffix("/cancel")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// Request paths are logged, but never unbounded or with odd bytes.
fn loggable_path(path: &str) -> String {
    path.chars()
        .take(160)
        .map(|c| if c.is_ascii_graphic() { c } else { '?' })
        .collect()
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A compact JSON response.
pub fn json_response(status: StatusCode, value: &Value) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
}
