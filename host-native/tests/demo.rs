//! `/demo/` through the router, without a socket: the files of a demo
//! directory with their media types, HEAD, the `/demo` redirect, 405 for
//! other methods, and 404 for every way out of the directory.

mod support;

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use iac_agui::app::HttpSettings;
use iac_agui::router::handle;
use support::*;

/// A demo directory inside `outer/demo`, next to a file it must not leak.
struct Site {
    outer: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let outer = tempfile::tempdir().unwrap();
        let dir = outer.path().join("demo");
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        std::fs::write(dir.join("index.html"), "<!doctype html><p>demo</p>").unwrap();
        std::fs::write(dir.join("app.js"), "console.log('app');").unwrap();
        std::fs::write(dir.join("style.css"), "p{}").unwrap();
        std::fs::write(dir.join("pkg/m_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
        std::fs::write(dir.join("pkg/m.d.ts"), "export {};").unwrap();
        std::fs::write(dir.join("pkg/package.json"), "{}").unwrap();
        std::fs::write(dir.join(".env"), "hidden").unwrap();
        std::fs::write(outer.path().join("Cargo.toml"), "SECRET-OUTSIDE").unwrap();
        std::os::unix::fs::symlink(outer.path().join("Cargo.toml"), dir.join("out.toml")).unwrap();
        std::os::unix::fs::symlink(outer.path(), dir.join("up")).unwrap();
        std::os::unix::fs::symlink(dir.join("app.js"), dir.join("alias.js")).unwrap();
        Site { outer }
    }

    fn dir(&self) -> std::path::PathBuf {
        self.outer.path().join("demo")
    }
}

fn app_with(demo_dir: Option<&Path>) -> TestApp {
    test_app(
        "http://127.0.0.1:9/",
        HttpSettings {
            auth_token: Some(iac_agui::secret::Secret::new("tok")),
            demo_dir: demo_dir.map(Path::to_path_buf),
            ..HttpSettings::default()
        },
    )
}

async fn call(t: &TestApp, method: Method, uri: &str) -> (StatusCode, HeaderMap, Bytes) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (parts, body) = handle(Arc::clone(&t.app), req).await.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

async fn get(t: &TestApp, uri: &str) -> (StatusCode, HeaderMap, Bytes) {
    call(t, Method::GET, uri).await
}

fn content_type(headers: &HeaderMap) -> &str {
    headers[header::CONTENT_TYPE].to_str().unwrap()
}

#[tokio::test]
async fn index_without_auth() {
    let site = Site::new();
    let t = app_with(Some(&site.dir()));
    let (status, headers, body) = get(&t, "/demo/").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type(&headers), "text/html; charset=utf-8");
    assert_eq!(&body[..], b"<!doctype html><p>demo</p>");
    // The query is the page's business (`?server=`), not a file name.
    let (status, _, body) = get(&t, "/demo/?server=http://127.0.0.1:1/").await;
    assert_eq!(
        (status, &body[..]),
        (StatusCode::OK, &b"<!doctype html><p>demo</p>"[..])
    );
}

#[tokio::test]
async fn files_with_their_media_types() {
    let site = Site::new();
    let t = app_with(Some(&site.dir()));
    for (uri, want, bytes) in [
        (
            "/demo/app.js",
            "text/javascript",
            &b"console.log('app');"[..],
        ),
        ("/demo/style.css", "text/css", b"p{}"),
        (
            "/demo/pkg/m_bg.wasm",
            "application/wasm",
            b"\0asm\x01\0\0\0",
        ),
        (
            "/demo/pkg/m.d.ts",
            "application/octet-stream",
            b"export {};",
        ),
        ("/demo/pkg/package.json", "application/json", b"{}"),
        (
            "/demo/index.html",
            "text/html; charset=utf-8",
            b"<!doctype html><p>demo</p>",
        ),
        // A symlink that stays inside the directory is fine.
        ("/demo/alias.js", "text/javascript", b"console.log('app');"),
        // An escaped plain name is decoded.
        ("/demo/%61pp.js", "text/javascript", b"console.log('app');"),
    ] {
        let (status, headers, body) = get(&t, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(content_type(&headers), want, "{uri}");
        assert_eq!(&body[..], bytes, "{uri}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
}

#[tokio::test]
async fn head_has_headers_and_no_body() {
    let site = Site::new();
    let t = app_with(Some(&site.dir()));
    let (status, headers, body) = call(&t, Method::HEAD, "/demo/pkg/m_bg.wasm").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type(&headers), "application/wasm");
    assert_eq!(headers[header::CONTENT_LENGTH], "8");
    assert!(body.is_empty());
}

#[tokio::test]
async fn other_methods_are_405() {
    let site = Site::new();
    let t = app_with(Some(&site.dir()));
    for method in [Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS] {
        let (status, headers, _) = call(&t, method.clone(), "/demo/app.js").await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(headers[header::ALLOW], "GET, HEAD");
    }
}

#[tokio::test]
async fn no_way_out_of_the_directory() {
    let site = Site::new();
    let t = app_with(Some(&site.dir()));
    for uri in [
        "/demo/../Cargo.toml",
        "/demo/%2e%2e/Cargo.toml",
        "/demo/%2E%2E%2FCargo.toml",
        "/demo/pkg/..%2F..%2FCargo.toml",
        "/demo/out.toml",
        "/demo/up/Cargo.toml",
        "/demo//etc/passwd",
        "/demo/%2Fetc%2Fpasswd",
        "/demo/..%5CCargo.toml",
        "/demo/app.js%00.html",
        "/demo/.env",
        "/demo/missing.js",
        "/demo/pkg",
        "/demo/pkg/",
    ] {
        let (status, _, body) = get(&t, uri).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        assert!(body.is_empty(), "{uri}");
    }
}

#[tokio::test]
async fn bare_demo_redirects_to_the_slash() {
    let site = Site::new();
    let t = app_with(Some(&site.dir()));
    let (status, headers, _) = get(&t, "/demo").await;
    assert!(status.is_redirection(), "{status}");
    assert_eq!(headers[header::LOCATION], "/demo/");
    let (_, headers, _) = get(&t, "/demo?server=x").await;
    assert_eq!(headers[header::LOCATION], "/demo/?server=x");
    let (status, _, _) = call(&t, Method::HEAD, "/demo").await;
    assert!(status.is_redirection(), "{status}");
    // Only `/demo` and below: `/demos` is another path.
    let (status, _, _) = get(&t, "/demos").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn not_served_without_a_demo_dir() {
    let t = app_with(None);
    for uri in ["/demo", "/demo/", "/demo/index.html"] {
        let (status, _, body) = get(&t, uri).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        assert!(body.is_empty());
    }
}

#[tokio::test]
async fn a_missing_directory_is_404_not_an_error() {
    let t = app_with(Some(Path::new("/definitely/not/a/demo/dir")));
    let (status, _, _) = get(&t, "/demo/").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // The rest of the server is unaffected.
    let (status, _, _) = get(&t, "/health").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_api_keeps_its_auth() {
    let site = Site::new();
    let t = app_with(Some(&site.dir()));
    let req = Request::post("/")
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap();
    let response = handle(Arc::clone(&t.app), req).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}
