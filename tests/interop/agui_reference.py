#!/usr/bin/env python3
"""Record what the Python reference adapter (``iac-code agui``) emits on AG-UI
for the interop scenarios, against the same real runtime and scripted LLM.

This is an oracle for iac-agui's interop tests, not a test of iac-agui: the
AG-UI streams it saves show what the reference implementation sends for the
same conversation. Not part of CI.

    agui_reference.py [--venv DIR] [--out DIR]    (default out: captures-agui/)

Writes ``<scenario>.sse`` (raw AG-UI SSE bytes, temp paths rewritten to
``/workspace``) and ``summary.json`` (event types per run).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_runtime import DEFAULT_VENV, Runtime, _die_with_parent, _free_port, _signal_group  # noqa: E402

HERE = Path(__file__).resolve().parent


class Adapter:
    """``iac-code agui --a2a-url`` in front of a running :class:`Runtime`."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.port = _free_port()
        assert rt.root is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IAC_CODE_", "IACCODE_"))}
        env.update(rt.env)
        env["IAC_CODE_AGUI_A2A_TOKEN"] = rt.token
        cmd = [
            str(rt.venv / "bin" / "iac-code"),
            "agui",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--a2a-url",
            rt.a2a_url or "",
            "--state-dir",
            str(rt.root / "agui-state"),
        ]
        with open(rt.root / "agui.log", "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                cwd=rt.workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"iac-code agui exited ({self.proc.returncode})")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("iac-code agui not ready")

    def run(self, body: dict[str, Any]) -> bytes:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request(
                "POST",
                "/",
                body=json.dumps(body),
                headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
            )
            resp = conn.getresponse()
            return resp.read() if resp.status == 200 else f"HTTP {resp.status}\n".encode() + resp.read()
        finally:
            conn.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            _signal_group(self.proc, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _signal_group(self.proc, signal.SIGKILL)
                self.proc.wait(timeout=10)


def events(raw: bytes) -> list[dict[str, Any]]:
    out = []
    for line in raw.decode(errors="replace").splitlines():
        if line.startswith("data:"):
            with contextlib.suppress(ValueError):
                out.append(json.loads(line[5:]))
    return out


def run_input(
    thread: str, run: str, cwd: str, text: str | None, resume: list[dict[str, Any]] | None = None, **props: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "threadId": thread,
        "runId": run,
        "state": {},
        "messages": [],
        "tools": [],
        "context": [],
        "forwardedProps": {"iacCode": {"schemaVersion": 1, "rosInvocationId": f"ros-{thread}", "cwd": cwd, **props}},
    }
    if text is not None:
        body["messages"] = [{"id": f"m-{run}", "role": "user", "content": text}]
    if resume is not None:
        body["resume"] = resume
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record the reference adapter's AG-UI output.")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--out", type=Path, default=HERE / "captures-agui")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {}
    with Runtime(args.venv) as rt:
        adapter = Adapter(rt)
        cwd = str(rt.workspace)
        pipe = {"runMode": "pipeline", "pipelineName": "selling"}

        def record(name: str, body: dict[str, Any]) -> list[dict[str, Any]]:
            raw = adapter.run(body)
            (args.out / f"{name}.sse").write_bytes(raw.replace(str(rt.root).encode(), b"/workspace"))
            evs = events(raw)
            summary[name] = [e.get("type") for e in evs]
            print(f"{name}: {len(evs)} events, last {summary[name][-1:] or raw[:120]}", flush=True)
            return evs

        def interrupt_of(evs: list[dict[str, Any]]) -> dict[str, Any]:
            last = evs[-1] if evs else {}
            return ((last.get("outcome") or {}).get("interrupts") or [{}])[0]

        try:
            record("plain", run_input("t-plain", "r1", cwd, "SCENARIO_PLAIN hello"))
            record("reasoning", run_input("t-think", "r1", cwd, "SCENARIO_THINK hi"))
            record("read_only_tool", run_input("t-tool", "r1", cwd, "SCENARIO_TOOL list"))
            for name, status, payload in [
                ("permission_allow", "resolved", {"decision": "allow_once"}),
                ("permission_deny", "resolved", {"decision": "deny"}),
                ("permission_cancelled", "cancelled", None),
            ]:
                first = record(f"{name}_1", run_input(f"t-{name}", "r1", cwd, f"SCENARIO_PERM file={name}.txt"))
                entry: dict[str, Any] = {"interruptId": interrupt_of(first).get("id"), "status": status}
                if payload is not None:
                    entry["payload"] = payload
                record(f"{name}_2", run_input(f"t-{name}", "r2", cwd, None, [entry]))
                summary[f"{name}_file_written"] = (rt.workspace / f"{name}.txt").exists()
            for name, payload in [
                ("pipeline_option", {"selectedId": "cn-beijing"}),
                ("pipeline_free_text", {"freeText": "Or maybe Shanghai please"}),
            ]:
                first = record(f"{name}_1", run_input(f"t-{name}", "r1", cwd, "SCENARIO_PIPE I need a website", **pipe))
                entry = {"interruptId": interrupt_of(first).get("id"), "status": "resolved", "payload": payload}
                record(f"{name}_2", run_input(f"t-{name}", "r2", cwd, None, [entry], **pipe))
        finally:
            adapter.stop()
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
