//! The web demo's static files at `/demo/` (`serve --demo` or `--demo-dir`).
//!
//! The demo page and its wasm package are plain files, served so that the
//! page is same-origin with `POST /` and needs no CORS. Only files below the
//! demo directory are ever answered: the request path is decoded once, every
//! segment is checked (no `..`, `.`, hidden names, backslashes or NULs), and
//! the file's real path (symlinks resolved) must still lie inside the
//! directory's real path. Anything else is a plain 404, so a probe learns
//! nothing about the file system. No auth: the page itself sends the bearer
//! token the user gives it.

use std::path::{Component, Path, PathBuf};

use bytes::Bytes;
use http::{header, HeaderValue, Method, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};

use crate::router::ResponseBody;

/// The URL prefix of the demo, without its trailing slash.
pub const DEMO_PREFIX: &str = "/demo";

/// The demo directory of this source tree (`<repo>/web-demo`), fixed at
/// compile time: `serve --demo` from a checkout needs no flag.
pub fn default_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).join("web-demo")
}

/// True for paths the demo answers: `/demo` and everything below `/demo/`.
pub fn is_demo_path(path: &str) -> bool {
    path == DEMO_PREFIX
        || path
            .strip_prefix(DEMO_PREFIX)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// A one-line startup warning when the demo cannot work yet (the directory
/// or its built `pkg/` is missing), else `None`.
pub fn missing_warning(dir: &Path) -> Option<String> {
    const HINT: &str = "run `bash .ci/wasm.sh --build-only` to build it";
    if !dir.join("index.html").is_file() {
        return Some(format!(
            "the web demo is not at {} (no index.html); /demo/ answers 404 until it is: {HINT}",
            dir.display()
        ));
    }
    if !dir.join("pkg").is_dir() {
        return Some(format!(
            "the web demo in {} has no pkg/ (the wasm build); the page cannot start: {HINT}",
            dir.display()
        ));
    }
    None
}

/// Answers a request for a demo path (see [`is_demo_path`]): GET and HEAD
/// only, `/demo` redirects to `/demo/`, a path ending in `/` means its
/// `index.html`.
pub async fn respond(
    dir: &Path,
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Response<ResponseBody> {
    if method != Method::GET && method != Method::HEAD {
        let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let Some(rest) = path.strip_prefix("/demo/") else {
        return redirect_to_slash(query);
    };
    let Some(relative) = safe_relative(rest) else {
        return empty(StatusCode::NOT_FOUND);
    };
    match read_inside(dir, &relative).await {
        Some(bytes) => file_response(method, content_type(&relative), bytes),
        None => empty(StatusCode::NOT_FOUND),
    }
}

/// The media type of a demo file, from its name.
pub fn content_type(path: &Path) -> &'static str {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    match extension {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        "css" => "text/css",
        "wasm" => "application/wasm",
        "json" => "application/json",
        // `.d.ts` and anything unknown: the browser must not guess.
        _ => "application/octet-stream",
    }
}

/// The request path below `/demo/` as a relative path of plain names, or
/// `None` when it is anything else. Percent escapes are decoded first, so
/// `%2e%2e` is judged as `..`; a path ending in `/` names its `index.html`.
fn safe_relative(rest: &str) -> Option<PathBuf> {
    let decoded = percent_decode(rest)?;
    let mut relative = PathBuf::new();
    let mut segments = decoded.split('/').peekable();
    while let Some(segment) = segments.next() {
        let last = segments.peek().is_none();
        if segment.is_empty() && last {
            relative.push("index.html");
            break;
        }
        // Empty (`//`, a leading `/`), `.`, `..` and hidden names are
        // refused, as are bytes a file name here never needs.
        if segment.is_empty()
            || segment.starts_with('.')
            || segment.contains(['\\', '\0', ':'])
            || segment.chars().any(char::is_control)
        {
            return None;
        }
        relative.push(segment);
    }
    let plain = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    plain.then_some(relative)
}

/// Reads `dir/relative` if its real path is a regular file inside the real
/// path of `dir` (a symlink may point within the directory, not out of it).
async fn read_inside(dir: &Path, relative: &Path) -> Option<Bytes> {
    let root = tokio::fs::canonicalize(dir).await.ok()?;
    let file = tokio::fs::canonicalize(root.join(relative)).await.ok()?;
    if !file.starts_with(&root) || !tokio::fs::metadata(&file).await.ok()?.is_file() {
        return None;
    }
    tokio::fs::read(&file).await.ok().map(Bytes::from)
}

/// Decodes `%XX` escapes; `None` for a broken escape or bytes that are not
/// UTF-8 (no demo file has such a name).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let value = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            out.push(value);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn file_response(
    method: &Method,
    content_type: &'static str,
    bytes: Bytes,
) -> Response<ResponseBody> {
    let length = bytes.len();
    let body = if method == Method::HEAD {
        Bytes::new()
    } else {
        bytes
    };
    let mut response = Response::new(Full::new(body).boxed());
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    // A rebuilt wasm package must reach the page without a stale cache.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// `/demo` → `/demo/`, keeping the query (the page reads `?server=`).
fn redirect_to_slash(query: Option<&str>) -> Response<ResponseBody> {
    let location = match query {
        Some(query) => format!("{DEMO_PREFIX}/?{query}"),
        None => format!("{DEMO_PREFIX}/"),
    };
    let mut response = empty(StatusCode::PERMANENT_REDIRECT);
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_plain_names_only() {
        let ok = |s: &str| safe_relative(s).map(|p| p.to_string_lossy().into_owned());
        assert_eq!(ok("").as_deref(), Some("index.html"));
        assert_eq!(ok("app.js").as_deref(), Some("app.js"));
        assert_eq!(ok("pkg/a%20b.js").as_deref(), Some("pkg/a b.js"));
        assert_eq!(ok("pkg/").as_deref(), Some("pkg/index.html"));
        for bad in [
            "..",
            "../Cargo.toml",
            "%2e%2e/Cargo.toml",
            "%2E%2E%2FCargo.toml",
            "pkg/../../x",
            "./app.js",
            "/etc/passwd",
            "%2fetc%2fpasswd",
            "a//b",
            "a%5c..%5cb",
            "a\\b",
            "a%00b",
            ".git/config",
            "c:x",
            "%zz",
            "%e",
            "%ff",
        ] {
            assert_eq!(ok(bad), None, "{bad:?} must be refused");
        }
    }

    #[test]
    fn content_types_by_extension() {
        for (name, want) in [
            ("index.html", "text/html; charset=utf-8"),
            ("A.HTML", "text/html; charset=utf-8"),
            ("app.js", "text/javascript"),
            ("t.mjs", "text/javascript"),
            ("style.css", "text/css"),
            ("m_bg.wasm", "application/wasm"),
            ("package.json", "application/json"),
            ("m.d.ts", "application/octet-stream"),
            ("m_bg.wasm.d.ts", "application/octet-stream"),
            ("README", "application/octet-stream"),
        ] {
            assert_eq!(content_type(Path::new(name)), want, "{name}");
        }
    }

    #[test]
    fn demo_paths() {
        assert!(is_demo_path("/demo") && is_demo_path("/demo/") && is_demo_path("/demo/x"));
        assert!(!is_demo_path("/demos") && !is_demo_path("/") && !is_demo_path("/demox/"));
    }

    #[test]
    fn default_dir_is_the_web_demo_of_this_tree() {
        let dir = default_dir();
        assert!(dir.ends_with("web-demo"));
        assert!(dir.join("index.html").is_file(), "{}", dir.display());
    }

    #[test]
    fn warnings_name_the_build_step() {
        let dir = tempfile::tempdir().unwrap();
        let warning = missing_warning(dir.path()).unwrap();
        assert!(
            warning.contains("index.html") && warning.contains("bash .ci/wasm.sh --build-only")
        );
        std::fs::write(dir.path().join("index.html"), "<p>").unwrap();
        let warning = missing_warning(dir.path()).unwrap();
        assert!(warning.contains("pkg/") && warning.contains("bash .ci/wasm.sh --build-only"));
        assert!(!warning.contains('\n'));
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        assert_eq!(missing_warning(dir.path()), None);
    }
}
