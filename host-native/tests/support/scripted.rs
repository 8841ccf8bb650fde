//! The scripted A2A runtime behind a full server state, and request helpers.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use iac_agui::app::{App, HttpSettings};
use iac_agui::router::handle;
use serde_json::{json, Value};

pub struct Env {
    pub app: Arc<App>,
    pub runtime: Option<iac_agui_scripted_runtime::RuntimeHandle>,
    pub root: tempfile::TempDir,
    pub workspace: std::path::PathBuf,
    pub _shutdown: tokio::sync::watch::Sender<bool>,
}

pub const A2A_TOKEN: &str = "a2a-bearer-SECRET-0001";

pub async fn env(http: HttpSettings) -> Env {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let runtime = iac_agui_scripted_runtime::serve(
        listener,
        iac_agui_scripted_runtime::Config {
            token: Some(A2A_TOKEN.to_owned()),
            ..Default::default()
        },
    )
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    let workspace = std::fs::canonicalize(root.path()).unwrap().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let (app, shutdown) = app_over(&runtime.url(), root.path(), &workspace, http);
    Env {
        app,
        runtime: Some(runtime),
        root,
        workspace,
        _shutdown: shutdown,
    }
}

pub fn app_over(
    url: &str,
    root: &std::path::Path,
    workspace: &std::path::Path,
    http: HttpSettings,
) -> (Arc<App>, tokio::sync::watch::Sender<bool>) {
    let store = iac_agui::store::StateStore::open(&root.join("state")).unwrap();
    let client = iac_agui::a2a_client::A2aClient::new(
        url,
        Some(iac_agui::secret::Secret::new(A2A_TOKEN)),
        Default::default(),
    );
    let policy = iac_agui::workspace::WorkspacePolicy::with_roots([workspace.to_owned()]);
    let (tx, rx) = tokio::sync::watch::channel(false);
    (App::new(http, store, client, policy, rx), tx)
}

pub fn body(e: &Env, thread: &str, run: &str, text: &str) -> Value {
    let mut body = super::run_body(thread, run, &e.workspace);
    body["messages"][0]["content"] = json!(text);
    body
}

pub async fn post(
    app: &Arc<App>,
    path: &str,
    body: &Value,
    auth: Option<&str>,
) -> (StatusCode, Bytes) {
    let mut req = Request::post(path)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream");
    if let Some(token) = auth {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let response = handle(
        Arc::clone(app),
        req.body(Full::new(Bytes::from(body.to_string()))).unwrap(),
    )
    .await;
    let status = response.status();
    let bytes = tokio::time::timeout(Duration::from_secs(20), response.into_body().collect())
        .await
        .expect("the stream ends")
        .unwrap()
        .to_bytes();
    (status, bytes)
}
