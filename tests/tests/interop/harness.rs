//! The interop harness: the real `iac-code a2a` runtime (through
//! `tests/interop/run_runtime.py`, with the scripted LLM) and `iac-agui serve`
//! in one of its two backend modes, plus the stream checks every run gets.
//!
//! The stock e2e [`Server`](iac_agui_tests::procs::Server) cannot be used
//! here: it always adds `--demo` without an `--a2a-url` and cannot hand the
//! process the runtime's environment (PATH with the venv, provider settings),
//! which is exactly what managed-child mode needs.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use iac_agui_core::verifier::Verifier;
use iac_agui_tests::clients::{check_streams, checker_dir, rejection};
use iac_agui_tests::http::{Request, Streaming};
use iac_agui_tests::procs::{binary, free_port};
use iac_agui_tests::sse::{parse, Received};
use serde_json::{json, Value};

/// The `rosInvocationId` every interop run sends.
pub(crate) const ROS: &str = "ros-interop-1";

/// How long one run may take before the test fails instead of hanging (the
/// server's heartbeats would keep a stuck stream open forever).
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Which backend `iac-agui serve` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `--a2a-url` at a runtime started by `run_runtime.py`.
    External,
    /// `iac-code a2a` started by iac-agui itself, found on PATH.
    Managed,
}

/// The scripted LLM (and, in external mode, the runtime) of `run_runtime.py`.
#[derive(Debug)]
pub(crate) struct Runtime {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its ready line.
    pub(crate) ready: Value,
    /// The temp root every workspace lives under.
    pub(crate) root: PathBuf,
}

impl Runtime {
    /// Starts `run_runtime.py` (`--llm-only` in managed mode) and waits for
    /// its ready line.
    ///
    /// # Panics
    /// When the venv is missing or the runtime does not start; the message
    /// names the setup command. Never skips.
    pub(crate) fn start(mode: Mode) -> Runtime {
        let venv = venv();
        assert!(
            venv.join("bin/iac-code").is_file(),
            "the interop venv is missing ({} has no bin/iac-code); run `bash .ci/interop-setup.sh` first",
            venv.display()
        );
        let mut command = Command::new(python());
        command
            .arg(repo().join("tests/interop/run_runtime.py"))
            .arg("--venv")
            .arg(&venv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if mode == Mode::Managed {
            command.arg("--llm-only");
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start run_runtime.py with `{}`: {e}", python()));
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("run_runtime.py stdout");
        let ready: Value = serde_json::from_str(&line).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("run_runtime.py printed no ready line: {line:?}")
        });
        if ready["ready"] != true {
            let _ = child.kill();
            panic!(
                "the real runtime did not start: {}\n(setup: `bash .ci/interop-setup.sh`)",
                ready["error"]
            );
        }
        let root = PathBuf::from(ready["root"].as_str().expect("root"));
        Runtime {
            child,
            stdin,
            ready,
            root,
        }
    }

    /// The environment a managed child (and the server) needs.
    pub(crate) fn env(&self) -> BTreeMap<String, String> {
        self.ready["env"]
            .as_object()
            .expect("env")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect()
    }

    /// A fresh workspace directory under the runtime's root.
    pub(crate) fn workspace(&self, name: &str) -> PathBuf {
        let dir = self.root.join(format!("ws-{name}"));
        std::fs::create_dir_all(&dir).expect("workspace dir");
        dir
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // EOF on stdin makes run_runtime.py stop the runtime and remove its
        // temp dir; kill it only when it does not go in time.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `iac-agui serve` against a [`Runtime`], with every received stream
/// checked and queued for the AG-UI clients.
#[derive(Debug)]
pub(crate) struct Suite {
    /// The backend mode.
    pub(crate) mode: Mode,
    /// The `iac-agui serve` process.
    child: Option<Child>,
    /// Where the server listens.
    pub(crate) addr: SocketAddr,
    log: Arc<Mutex<String>>,
    streams: Mutex<Vec<(String, String)>>,
    /// Kept last so the server stops before the runtime it talks to.
    pub(crate) runtime: Runtime,
}

impl Suite {
    /// Starts the runtime and the server in `mode`.
    ///
    /// # Panics
    /// When the Node packages, the venv or a process is missing.
    pub(crate) fn start(mode: Mode) -> Suite {
        let checker = checker_dir();
        assert!(
            checker.join("node_modules/@ag-ui/client").is_dir(),
            "the AG-UI client packages are not installed in {}; run `.ci/e2e-setup.sh` \
             (or `npm ci --prefix tests/agui-clients`) first",
            checker.display()
        );
        let runtime = Runtime::start(mode);
        let mut suite = Suite {
            mode,
            child: None,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            log: Arc::new(Mutex::new(String::new())),
            streams: Mutex::new(Vec::new()),
            runtime,
        };
        suite.spawn();
        suite
    }

    /// Stops the server and starts it again with the same state directory
    /// (in managed mode that also restarts its `iac-code a2a` child).
    pub(crate) fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// What the server logged so far.
    pub(crate) fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// A new-run body in `ws` whose user message says `text`; `props` are
    /// merged into `forwardedProps.iacCode`.
    pub(crate) fn body(
        &self,
        ws: &Path,
        thread: &str,
        run: &str,
        text: &str,
        props: Value,
    ) -> Value {
        let mut iac = json!({
            "schemaVersion": 1,
            "rosInvocationId": ROS,
            "cwd": ws.to_str().expect("UTF-8 path"),
        });
        if let (Some(iac), Some(extra)) = (iac.as_object_mut(), props.as_object()) {
            iac.extend(extra.clone());
        }
        json!({
            "threadId": thread,
            "runId": run,
            "state": {},
            "messages": [{"id": format!("msg-{thread}-{run}"), "role": "user", "content": text}],
            "tools": [],
            "context": [],
            "forwardedProps": {"iacCode": iac},
        })
    }

    /// A resume body answering interrupts with `entries`.
    pub(crate) fn resume_body(
        &self,
        ws: &Path,
        thread: &str,
        run: &str,
        props: Value,
        entries: Value,
    ) -> Value {
        let mut body = self.body(ws, thread, run, "", props);
        body["messages"] = json!([]);
        body["resume"] = entries;
        body
    }

    /// Sends `body`, expects a 200 event stream, reads it to its terminal
    /// event and checks it.
    pub(crate) fn run(&self, body: &Value) -> Received {
        let mut stream = self.open(body);
        let text = self.finish(&mut stream);
        self.accept(body, &text)
    }

    /// Sends `body` and returns the open stream (200 asserted).
    pub(crate) fn open(&self, body: &Value) -> Streaming {
        let mut stream = Request::agui("/", body).open(self.addr);
        if stream.status != 200 {
            let status = stream.status;
            let rest = String::from_utf8_lossy(&stream.read_to_end()).into_owned();
            panic!(
                "expected 200, got {status}: {rest}\nserver log:\n{}",
                self.log()
            );
        }
        stream
    }

    /// Reads an open stream up to its terminal event (within [`RUN_LIMIT`])
    /// and then to its end.
    pub(crate) fn finish(&self, stream: &mut Streaming) -> String {
        stream.read_until(RUN_LIMIT, terminal);
        String::from_utf8(stream.read_to_end()).expect("UTF-8 stream")
    }

    /// Checks a complete stream: LF framing, the core's strict verifier with
    /// the request's ids, a terminal event; queues it for the clients.
    pub(crate) fn accept(&self, body: &Value, text: &str) -> Received {
        let received = parse(text);
        assert!(
            received.problems.is_empty(),
            "framing {:?} in\n{text}",
            received.problems
        );
        let thread = body["threadId"].as_str().unwrap_or("");
        let run = body["runId"].as_str().unwrap_or("");
        let mut verifier = Verifier::expecting(thread, run);
        for event in &received.events {
            if let Err(v) = verifier.feed_json(event) {
                panic!("verifier: {v} in\n{text}");
            }
        }
        if let Err(v) = verifier.finish() {
            panic!("verifier at the end: {v} in\n{text}");
        }
        let name = format!("{:?}/{thread}/{run}", self.mode);
        if let Some(dir) = std::env::var_os("IAC_INTEROP_CAPTURE") {
            // For comparing with the reference adapter's captures by hand.
            let dir = PathBuf::from(dir).join(format!("{:?}", self.mode));
            std::fs::create_dir_all(&dir).expect("capture dir");
            std::fs::write(dir.join(format!("{thread}_{run}.sse")), text).expect("capture");
        }
        self.streams
            .lock()
            .expect("streams")
            .push((name, text.to_owned()));
        received
    }

    /// A JSON-RPC call straight to the runtime, to observe it; `None` in
    /// managed mode, where only iac-agui knows the child's token.
    pub(crate) fn runtime_rpc(&self, method: &str, params: Value) -> Option<Value> {
        let url = self.runtime.ready["a2aUrl"].as_str()?;
        let addr: SocketAddr = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("runtime address");
        let token = self.runtime.ready["token"].as_str().expect("token");
        let body = json!({"jsonrpc": "2.0", "id": "interop", "method": method, "params": params});
        let response = Request::agui("/", &body)
            .header("A2A-Version", "1.0")
            .bearer(token)
            .send(addr);
        Some(response.json())
    }

    /// Runs every stream received so far through both official AG-UI
    /// clients; each must be accepted in full.
    pub(crate) fn check_clients(&self) -> usize {
        let streams = std::mem::take(&mut *self.streams.lock().expect("streams"));
        let texts: BTreeMap<String, String> = streams.iter().cloned().collect();
        let failures: Vec<String> = check_streams(&streams)
            .into_iter()
            .filter_map(|(name, verdicts)| {
                rejection(&verdicts).map(|why| format!("{name}: {why}\n{}", texts[&name]))
            })
            .collect();
        assert!(
            failures.is_empty(),
            "AG-UI clients rejected:\n{}",
            failures.join("\n")
        );
        streams.len()
    }

    /// SIGTERM, then SIGKILL after a grace period. Not SIGKILL at once: in
    /// managed mode the server must stop its `iac-code a2a` child itself, and
    /// a killed server leaves that child running (it has no parent-death
    /// signal).
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    fn spawn(&mut self) {
        let port = free_port();
        let mut command = Command::new(binary("iac-agui", "IAC_AGUI_BIN"));
        command
            .arg("serve")
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .arg("--state-dir")
            .arg(self.runtime.root.join("agui-state"))
            // A leak guard: should the test process die without dropping
            // this handle, the server (and its managed child) still goes
            // away once idle. Far longer than any gap between two runs.
            .args(["--idle-shutdown", "300"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for key in [
            "IAC_CODE_AGUI_AUTH_TOKEN",
            "IAC_CODE_AGUI_A2A_TOKEN",
            "IAC_CODE_AGUI_A2A_URL",
            "IAC_CODE_AGUI_PORT",
            "IAC_CODE_AGUI_HOST",
            "IAC_CODE_AGUI_STATE_DIR",
            "IACCODE_A2A_HTTP_TOKEN",
        ] {
            command.env_remove(key);
        }
        // PATH (venv first), HOME, IAC_CODE_CONFIG_DIR, the provider and both
        // allowed-cwd lists: the managed child inherits them from the server.
        command.envs(self.runtime.env());
        if self.mode == Mode::External {
            let url = self.runtime.ready["a2aUrl"].as_str().expect("a2aUrl");
            command.args(["--a2a-url", url]);
            command.env(
                "IAC_CODE_AGUI_A2A_TOKEN",
                self.runtime.ready["token"].as_str().expect("token"),
            );
        }
        let mut child = command.spawn().expect("start iac-agui");
        drain(child.stdout.take().expect("stdout"), Arc::clone(&self.log));
        drain(child.stderr.take().expect("stderr"), Arc::clone(&self.log));
        self.addr = SocketAddr::from(([127, 0, 0, 1], port));
        self.child = Some(child);
        // Managed mode waits for `iac-code a2a` (Python start-up) first.
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("iac-agui exited with {status} at startup:\n{}", self.log());
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok()
                && Request::get("/health").send(self.addr).status == 200
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "iac-agui did not come up:\n{}",
                self.log()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Suite {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The text so far ends with a complete RUN_FINISHED or RUN_ERROR record.
fn terminal(text: &str) -> bool {
    let Some(last) = text.trim_end_matches('\n').rsplit("\n\n").next() else {
        return false;
    };
    text.ends_with("\n\n")
        && (last.contains("\"type\":\"RUN_FINISHED\"") || last.contains("\"type\":\"RUN_ERROR\""))
}

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// The venv of `.ci/interop-setup.sh` (`IAC_INTEROP_VENV` overrides).
fn venv() -> PathBuf {
    std::env::var_os("IAC_INTEROP_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/interop-venv"))
}

/// The interpreter for the (stdlib-only) scripts.
fn python() -> String {
    std::env::var("IAC_INTEROP_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

fn drain<R: Read + Send + 'static>(reader: R, log: Arc<Mutex<String>>) {
    thread::spawn(move || {
        for line in BufReader::new(reader).lines() {
            let Ok(line) = line else { break };
            if let Ok(mut log) = log.lock() {
                log.push_str(&line);
                log.push('\n');
            }
        }
    });
}
