"""Minimal stdlib A2A 1.0 JSON-RPC client for the interop smoke tests.

Speaks to the real ``iac-code a2a`` runtime the way the AG-UI adapter does
(bearer token, ``A2A-Version: 1.0``, ``SendStreamingMessage`` over SSE), but
keeps the raw bytes so the tests can check the framing too.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import uuid
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterator
from urllib.parse import urlencode, urlparse

READ_TIMEOUT_S = 90.0


@dataclass
class Stream:
    """One streaming response: status, content type, parsed ``data:`` payloads, raw bytes."""

    status: int
    content_type: str
    frames: list[dict[str, Any]] = field(default_factory=list)
    raw: bytes = b""
    body: Any = None  # set when the server answered with plain JSON instead of SSE

    def results(self) -> list[dict[str, Any]]:
        return [f["result"] for f in self.frames if "result" in f]

    def states(self) -> list[str]:
        return [state_of(r) for r in self.results()]

    def iac(self) -> list[dict[str, Any]]:
        """``metadata.iac_code`` of every status update (``{}`` when absent)."""
        return [
            (r["statusUpdate"].get("metadata") or {}).get("iac_code") or {}
            for r in self.results()
            if "statusUpdate" in r
        ]

    def texts(self, message_suffix: str = "-message") -> str:
        """Concatenated status-message text of the frames whose message id ends with ``message_suffix``."""
        out = []
        for r in self.results():
            msg = (r.get("statusUpdate") or {}).get("status", {}).get("message")
            if msg and msg.get("messageId", "").endswith(message_suffix):
                out.extend(p.get("text", "") for p in msg.get("parts", []))
        return "".join(out)


class A2AClient:
    def __init__(self, base_url: str, token: str) -> None:
        url = urlparse(base_url)
        self.host = url.hostname or "127.0.0.1"
        self.port = url.port or 80
        self.token = token

    # ------------------------------------------------------------ JSON-RPC

    def call(self, method: str, params: dict[str, Any], *, headers: dict[str, str] | None = None) -> dict[str, Any]:
        status, _ctype, body = self._post("/", _rpc(method, params), headers)
        if status != 200:
            raise RuntimeError(f"{method}: HTTP {status}: {body[:300]!r}")
        return json.loads(body)

    def stream(self, method: str, params: dict[str, Any]) -> Stream:
        """Send a streaming request and read it to EOF."""
        it = self.open_stream(method, params)
        stream = next(it)
        for _ in it:
            pass
        return stream

    def open_stream(self, method: str, params: dict[str, Any]) -> Iterator[Any]:
        """Generator: first yields the :class:`Stream` (headers read), then each parsed frame.

        The Stream object is filled in as frames arrive, so a caller can act
        (e.g. cancel) in the middle of a stream.
        """
        conn = http.client.HTTPConnection(self.host, self.port, timeout=READ_TIMEOUT_S)
        try:
            conn.request("POST", "/", body=json.dumps(_rpc(method, params)), headers=self._headers())
            resp = conn.getresponse()
            ctype = resp.getheader("Content-Type", "")
            stream = Stream(status=resp.status, content_type=ctype)
            if not ctype.startswith("text/event-stream"):
                stream.raw = resp.read()
                try:
                    stream.body = json.loads(stream.raw)
                except ValueError:
                    stream.body = None
                yield stream
                return
            yield stream
            buf = b""
            while True:
                line = resp.readline()
                if not line:
                    break
                stream.raw += line
                buf = line.strip()
                if buf.startswith(b"data:"):
                    frame = json.loads(buf[5:].strip())
                    stream.frames.append(frame)
                    yield frame
        finally:
            conn.close()

    # ------------------------------------------------------------ side endpoints

    def get_json(self, path: str, query: dict[str, Any] | None = None) -> tuple[int, Any]:
        if query:
            path = f"{path}?{urlencode(query)}"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=READ_TIMEOUT_S)
        try:
            conn.request("GET", path, headers=self._headers())
            resp = conn.getresponse()
            return resp.status, _maybe_json(resp.read())
        finally:
            conn.close()

    def post_json(self, path: str, body: Any) -> tuple[int, Any]:
        status, _ctype, raw = self._post(path, body, None)
        return status, _maybe_json(raw)

    def raw_post(self, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """POST / with exactly these headers (for auth/version negative tests)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=READ_TIMEOUT_S)
        try:
            conn.request("POST", "/", body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type", ""), resp.read()
        finally:
            conn.close()

    def _post(self, path: str, body: Any, headers: dict[str, str] | None) -> tuple[int, str, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=READ_TIMEOUT_S)
        try:
            conn.request("POST", path, body=json.dumps(body), headers={**self._headers(), **(headers or {})})
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type", ""), resp.read()
        finally:
            conn.close()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "A2A-Version": "1.0", "Content-Type": "application/json"}


def context_id_for(thread_id: str) -> str:
    """The adapter's context id: ``agui-`` + 40 hex of sha256(threadId)."""
    return "agui-" + hashlib.sha256(thread_id.encode()).hexdigest()[:40]


def user_message(
    text: str | None,
    *,
    context_id: str,
    cwd: str,
    task_id: str | None = None,
    message_id: str | None = None,
    data: dict[str, Any] | None = None,
    extra_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``SendStreamingMessage`` params object shaped like the adapter's."""
    part: dict[str, Any] = {"text": text} if data is None else {"data": data, "mediaType": "application/json"}
    meta = {
        "preferredLanguage": "en",
        "cleanupOnly": False,
        "rosInvocationId": f"ros-{context_id[-8:]}",
        "cwd": cwd,
        **(extra_meta or {}),
    }
    msg: dict[str, Any] = {
        "messageId": message_id or str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [part],
        "metadata": {"iac_code": meta},
        "contextId": context_id,
    }
    if task_id:
        msg["taskId"] = task_id
    return {"message": msg, "configuration": {"acceptedOutputModes": ["text/plain"]}}


def state_of(result: dict[str, Any]) -> str:
    inner = result.get("task") or result.get("statusUpdate") or result
    return (inner.get("status") or {}).get("state", "")


def task_id_of(stream: Stream) -> str | None:
    for r in stream.results():
        inner = r.get("task") or r.get("statusUpdate") or {}
        tid = inner.get("id") if "task" in r else inner.get("taskId")
        if tid:
            return tid
    return None


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}


def _maybe_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")
