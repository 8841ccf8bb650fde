//! The listening socket: HTTP/1.1 with keep-alive, a bound on the time to
//! send request headers, an idle timeout for connections that sit between
//! requests, and graceful shutdown.
//!
//! Idle here means "no request in progress": a connection streaming a long
//! silent SSE response is busy, not idle (its heartbeats keep it alive).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::app::App;

/// Connection timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnTimeouts {
    /// Longest time to send a request's headers.
    pub header_read: Duration,
    /// Longest time a keep-alive connection may sit with no request.
    pub idle: Duration,
}

impl Default for ConnTimeouts {
    fn default() -> Self {
        ConnTimeouts {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(60),
        }
    }
}

/// Serves `listener` until `shutdown` turns true, then stops accepting, asks
/// open connections to close after their current response, and returns once
/// they have (or after `grace`).
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    timeouts: ConnTimeouts,
    mut shutdown: watch::Receiver<bool>,
    grace: Duration,
) {
    let connections = Arc::new(AtomicUsize::new(0));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        let Ok((stream, _peer)) = accepted else {
            // Out of descriptors and the like: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = Arc::clone(&app);
        let shutdown = shutdown.clone();
        let connections = Arc::clone(&connections);
        connections.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            serve_connection(stream, app, timeouts, shutdown).await;
            connections.fetch_sub(1, Ordering::SeqCst);
        });
    }
    drop(listener);
    let deadline = tokio::time::Instant::now() + grace;
    while connections.load(Ordering::SeqCst) > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    app: Arc<App>,
    timeouts: ConnTimeouts,
    mut shutdown: watch::Receiver<bool>,
) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let activity = Arc::new(std::sync::Mutex::new(tokio::time::Instant::now()));
    let service = {
        let (in_flight, activity) = (Arc::clone(&in_flight), Arc::clone(&activity));
        service_fn(move |req: http::Request<Incoming>| {
            let app = Arc::clone(&app);
            let guard = InFlight::enter(Arc::clone(&in_flight), Arc::clone(&activity));
            async move {
                let response = crate::router::handle(app, req).await;
                // The guard lives as long as the body: a streamed response
                // keeps its connection busy until it ends.
                Ok::<_, std::convert::Infallible>(response.map(|body| GuardedBody {
                    body,
                    _guard: guard,
                }))
            }
        })
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header_read)
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let mut closing = false;
    loop {
        let idle_check = tokio::time::sleep(timeouts.idle.min(Duration::from_secs(1)));
        tokio::select! {
            _ = conn.as_mut() => return,
            _ = shutdown.wait_for(|stop| *stop), if !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
            () = idle_check => {
                let last = *activity.lock().unwrap_or_else(|e| e.into_inner());
                if !closing && in_flight.load(Ordering::SeqCst) == 0 && last.elapsed() >= timeouts.idle {
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Marks a request (including its streamed response, which the handler
/// returns before it ends) as in progress on its connection.
struct InFlight {
    count: Arc<AtomicUsize>,
    activity: Arc<std::sync::Mutex<tokio::time::Instant>>,
}

impl InFlight {
    fn enter(
        count: Arc<AtomicUsize>,
        activity: Arc<std::sync::Mutex<tokio::time::Instant>>,
    ) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight { count, activity }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.activity.lock().unwrap_or_else(|e| e.into_inner()) = tokio::time::Instant::now();
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that holds its connection's [`InFlight`] mark.
struct GuardedBody {
    body: crate::router::ResponseBody,
    _guard: InFlight,
}

impl hyper::body::Body for GuardedBody {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
