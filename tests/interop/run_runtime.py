#!/usr/bin/env python3
"""Start the scripted LLM and the real ``iac-code a2a`` runtime for interop tests.

Everything lives in a fresh temp dir (HOME, ``IAC_CODE_CONFIG_DIR``, the
workspace), so nothing touches the developer's own iac-code state. The runtime
only trusts workspaces under that dir.

As a program (for Rust tests and shell use)::

    run_runtime.py [--venv DIR] [--llm-only] [--keep]

prints exactly one JSON line on stdout once everything answers, e.g.::

    {"ready": true, "llmPort": 40111, "llmBaseUrl": "http://127.0.0.1:40111/v1",
     "a2aPort": 40112, "a2aUrl": "http://127.0.0.1:40112/", "token": "...",
     "root": "/tmp/iac-interop-…", "workspace": "/tmp/iac-interop-…/ws",
     "env": {…variables a managed iac-code child needs…}}

then runs until SIGTERM/SIGINT, or until its stdin reaches EOF when stdin is a
pipe (so a test that drops its handle stops it). ``--llm-only`` starts no
runtime (``a2aPort``/``a2aUrl`` are null): use it when ``iac-agui serve``
starts ``iac-code a2a`` itself with ``env`` applied and the venv's ``bin`` on
PATH (``env.PATH`` already has it first); ``env`` holds no A2A token, since
the managed child gets its token from its parent. On startup failure it prints
``{"ready": false, "error": "..."}`` and exits 1.

As a library: ``with Runtime(venv) as rt: rt.a2a_url, rt.token, rt.workspace``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_llm  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEFAULT_VENV = Path(os.environ.get("IAC_INTEROP_VENV", REPO / "target" / "interop-venv"))
READY_TIMEOUT_S = 60.0


class Runtime:
    """Fake LLM on a thread plus (unless ``llm_only``) an ``iac-code a2a`` child."""

    def __init__(
        self, venv: Path = DEFAULT_VENV, *, llm_only: bool = False, keep: bool = False, thinking_exposure: str = "all"
    ) -> None:
        self.venv = Path(venv)
        self.llm_only = llm_only
        self.keep = keep
        self.thinking_exposure = thinking_exposure
        self.token = os.environ.get("IAC_INTEROP_TOKEN") or secrets.token_urlsafe(24)
        self.root: Path | None = None
        self.workspace: Path | None = None
        self.llm_port: int | None = None
        self.a2a_port: int | None = None
        self.env: dict[str, str] = {}
        self._llm = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def a2a_url(self) -> str | None:
        return None if self.a2a_port is None else f"http://127.0.0.1:{self.a2a_port}/"

    @property
    def llm_base_url(self) -> str:
        return f"http://127.0.0.1:{self.llm_port}/v1"

    @property
    def log_path(self) -> Path:
        assert self.root is not None
        return self.root / "a2a.log"

    def start(self) -> Runtime:
        iac_code = self.venv / "bin" / "iac-code"
        if not iac_code.exists():
            raise RuntimeError(f"{iac_code} is missing; run .ci/interop-setup.sh first")
        self.root = Path(tempfile.mkdtemp(prefix="iac-interop-")).resolve()
        self.workspace = self.root / "ws"
        for sub in ("home", "config", "ws"):
            (self.root / sub).mkdir()
        self._llm = fake_llm.start_server(log_path=str(self.root / "llm-requests.jsonl"))
        self.llm_port = self._llm.server_address[1]
        self.env = self._child_env()
        if not self.llm_only:
            self._start_a2a()
        return self

    def restart_a2a(self) -> dict[str, float]:
        """Stop the runtime child and start a new one on a new port, same state dirs.

        Returns how long the stop and the start took, in seconds.
        """
        t0 = time.monotonic()
        self._stop_a2a()
        t1 = time.monotonic()
        self._start_a2a()
        return {"stopSeconds": round(t1 - t0, 2), "startSeconds": round(time.monotonic() - t1, 2)}

    def stop(self) -> None:
        self._stop_a2a()
        if self._llm is not None:
            self._llm.shutdown()
            self._llm.server_close()
            self._llm = None
        if self.root is not None and not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def ready_line(self) -> dict:
        return {
            "ready": True,
            "llmPort": self.llm_port,
            "llmBaseUrl": self.llm_base_url,
            "a2aPort": self.a2a_port,
            "a2aUrl": self.a2a_url,
            "token": self.token,
            "root": str(self.root),
            "workspace": str(self.workspace),
            "env": self.env,
        }

    def __enter__(self) -> Runtime:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ helpers

    def _child_env(self) -> dict[str, str]:
        assert self.root is not None
        return {
            "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.root / "home"),
            "IAC_CODE_CONFIG_DIR": str(self.root / "config"),
            "IAC_CODE_PROVIDER": "openai_compatible",
            "IAC_CODE_MODEL": fake_llm.MODEL_ID,
            "IAC_CODE_BASE_URL": self.llm_base_url,
            "IAC_CODE_API_KEY": "interop-fake-key",
            "IACCODE_A2A_ALLOWED_CWDS": str(self.root),
            "IAC_CODE_AGUI_ALLOWED_CWDS": str(self.root),
            "IAC_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "NO_COLOR": "1",
        }

    def _start_a2a(self) -> None:
        assert self.root is not None
        self.a2a_port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IAC_CODE_", "IACCODE_"))}
        env.update(self.env)
        env["IACCODE_A2A_HTTP_TOKEN"] = self.token
        cmd = [
            str(self.venv / "bin" / "iac-code"),
            "a2a",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.a2a_port),
            "--thinking-exposure",
            self.thinking_exposure,
        ]
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                cmd,
                cwd=self.workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            code = self._proc.poll()
            if code is not None:
                raise RuntimeError(f"iac-code a2a exited during startup (code {code}); log: {self._log_tail()}")
            if self._healthy():
                return
            time.sleep(0.1)
        self._stop_a2a()
        raise RuntimeError(f"iac-code a2a not ready after {READY_TIMEOUT_S:.0f}s; log: {self._log_tail()}")

    def _healthy(self) -> bool:
        req = urllib.request.Request(f"{self.a2a_url}health", headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=0.5) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _stop_a2a(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        # The child leads its own process group: signal the group, so nothing
        # it spawned (tool subprocesses) outlives it.
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait(timeout=10)

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Start the fake LLM and the real iac-code A2A runtime.")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--llm-only", action="store_true", help="start only the fake LLM")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir on exit")
    args = parser.parse_args(argv)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    runtime = Runtime(args.venv, llm_only=args.llm_only, keep=args.keep)
    try:
        runtime.start()
    except Exception as exc:  # noqa: BLE001 - reported to the parent as JSON
        runtime.stop()
        print(json.dumps({"ready": False, "error": str(exc)}), flush=True)
        return 1
    try:
        print(json.dumps(runtime.ready_line()), flush=True)
        if _stdin_is_pipe():
            threading.Thread(target=_wait_stdin_eof, args=(stop,), daemon=True).start()
        while not stop.wait(0.5):
            if runtime._proc is not None and runtime._proc.poll() is not None:
                print(f"iac-code a2a exited unexpectedly: {runtime._log_tail()}", file=sys.stderr)
                return 1
    finally:
        runtime.stop()
    return 0


def _die_with_parent() -> None:
    """Linux: SIGTERM the runtime when the thread that started it dies, so a
    killed test never leaves an ``iac-code a2a`` behind. Start it from a
    long-lived thread (the main thread)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stdin_is_pipe() -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError):
        return False


def _wait_stdin_eof(stop: threading.Event) -> None:
    while sys.stdin.buffer.read(4096):
        pass
    stop.set()


if __name__ == "__main__":
    sys.exit(main())
