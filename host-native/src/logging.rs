//! `tracing` setup: human lines or JSON objects on stderr, `info` by default
//! and `debug` with `--debug` (`RUST_LOG` refines either).
//!
//! What is logged is decided at the call sites: request lines (method, path,
//! status, duration), run outcomes (thread id, run id, code, duration) and
//! the managed runtime's own output, a line per event (target
//! `iac_agui::runtime`). Request bodies, A2A requests and tokens are never
//! logged.

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber writing to stderr.
pub fn init(format: LogFormat, debug: bool) {
    let _ = tracing::subscriber::set_global_default(subscriber(format, debug, std::io::stderr));
}

/// A subscriber writing to `writer` (tests capture logs with it).
pub fn subscriber<W>(
    format: LogFormat,
    debug: bool,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let default = if debug { "debug" } else { "info" };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false);
    match format {
        LogFormat::Human => Box::new(builder.finish()),
        LogFormat::Json => Box::new(builder.json().flatten_event(true).finish()),
    }
}
