//! The `iac-agui` binary: startup errors as one clear line, `--help`, and a
//! clean exit on SIGTERM.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_iac-agui");

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port`.
fn wait_listening(port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the server never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn missing_iac_code_is_one_line_with_the_install_command() {
    let empty = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["serve", "--port", &free_port().to_string(), "--state-dir"])
        .arg(state.path())
        .env("PATH", empty.path())
        .env_remove("IAC_CODE_AGUI_A2A_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0]
        .contains("pip install 'iac-code[agui]==0.16.0' 'a2a-sdk[http-server,signing]==1.2.0'"));
}

#[test]
fn bad_settings_exit_with_usage_errors() {
    let out = Command::new(BIN)
        .args(["serve", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(BIN)
        .args(["serve", "--a2a-url", "http://192.0.2.1:41242/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
    let out = Command::new(BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--idle-shutdown"));
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = Command::new(BIN)
        .args([
            "serve",
            "--demo",
            "--log-format",
            "json",
            "--port",
            &port.to_string(),
            "--state-dir",
        ])
        .arg(state.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_listening(port);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    let logs = String::from_utf8_lossy(&output.stderr);
    let last: serde_json::Value = serde_json::from_str(logs.lines().last().unwrap()).unwrap();
    assert_eq!(last["message"], "shutting down");
    assert_eq!(last["reason"], "SIGTERM");
}

/// The soft and hard "Max open files" of process `pid`.
fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut fields = line["Max open files".len()..].split_whitespace();
    (
        fields.next().unwrap().to_owned(),
        fields.next().unwrap().to_owned(),
    )
}

#[test]
fn the_open_file_limit_is_raised_to_the_hard_limit() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    // Started with a soft limit of 256, as a service manager might.
    let mut child = Command::new("bash")
        .args(["-c", "ulimit -Sn 256 && exec \"$@\"", "bash", BIN, "serve"])
        .args(["--demo", "--port", &port.to_string(), "--state-dir"])
        .arg(state.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port);
    let (soft, hard) = open_file_limits(child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(hard, "256", "the hard limit leaves nothing to raise");
    assert_eq!(soft, hard);
}
