#!/usr/bin/env python3
"""Scripted OpenAI-compatible chat-completions server for interop tests.

It stands in for the LLM behind the real ``iac-code a2a`` runtime, so the
runtime's own agent loop, tools and permission machinery run for real while the
model's answers are deterministic. Stdlib only; binds to loopback.

The reply is a pure function of the request (the conversation and the tool
list), never of server state, so a runtime restart or a retried request gets the
same answer. The scenario comes from a ``SCENARIO_<NAME>`` keyword in the latest
user message that carries one; extra system prompts, reminders and auxiliary
calls (titles, summaries) are tolerated.

Scenarios (normal mode):
  SCENARIO_PLAIN   plain streamed answer (also the default)
  SCENARIO_THINK   ``reasoning_content`` deltas, then an answer
  SCENARIO_TOOL    a read-only ``glob`` call, then an answer quoting its result
  SCENARIO_PERM    a ``bash`` call that writes ``file=<name>`` (default
                   ``interop-perm.txt``) into the workspace, then an answer
  SCENARIO_SLOW    an answer streamed slowly (``delay=<seconds>`` per chunk,
                   default 0.5, 40 chunks) so a test can cancel it mid-run
  SCENARIO_FAIL    the provider rejects the request (HTTP 400)
Pipeline mode (the request offers ``complete_step``):
  ask ``ask_user_question`` (region options) once, then submit a non-infra
  ``complete_step`` conclusion carrying the answer, which ends the selling
  pipeline early (``pipeline_completed`` with ``earlyExit``).

Run: ``python3 fake_llm.py [--port 0] [--log requests.jsonl]``. When ready it
prints one JSON line: ``{"fakeLlm": {"port": N, "baseUrl": "http://127.0.0.1:N/v1"}}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_ID = "fake"
SCENARIO_RE = re.compile(r"\bSCENARIO_([A-Z][A-Z0-9_]*)\b")
FILE_RE = re.compile(r"\bfile=([A-Za-z0-9][A-Za-z0-9._-]{0,63})")
DELAY_RE = re.compile(r"\bdelay=([0-9]{1,2}(?:\.[0-9]{1,3})?)\b")
DEFAULT_PERM_FILE = "interop-perm.txt"
PERM_FILE_TEXT = "written-by-interop"
REGION_OPTIONS = [
    {"id": "cn-hangzhou", "label": "Hangzhou"},
    {"id": "cn-beijing", "label": "Beijing"},
]
# OpenAI semantics: prompt_tokens includes the cached ones. iac-code reports
# totalTokens = input + output + cached (235), not total_tokens (135).
USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 15,
    "total_tokens": 135,
    "prompt_tokens_details": {"cached_tokens": 100},
}


def start_server(host: str = "127.0.0.1", port: int = 0, log_path: str | None = None) -> ThreadingHTTPServer:
    """Start the server on a daemon thread and return it (``server_address`` has the port)."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.log_path = log_path  # type: ignore[attr-defined]
    server.log_lock = threading.Lock()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name="fake-llm", daemon=True)
    thread.start()
    return server


def plan_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Decide the scripted reply for one chat-completions request.

    Returns ``{"reasoning": [str], "text": [str], "tool": {name, arguments} | None,
    "delay": float, "error": str | None}``.
    """
    messages = body.get("messages") or []
    tools = _tool_names(body.get("tools"))
    reply: dict[str, Any] = {"reasoning": [], "text": [], "tool": None, "delay": 0.0, "error": None}
    last = messages[-1] if messages else {}

    if "complete_step" in tools:
        return _plan_pipeline_step(messages, tools, reply)

    if last.get("role") == "tool":
        name = _tool_name_for_call(messages, last.get("tool_call_id"))
        result = _content_text(last.get("content")).strip()
        first_line = result.splitlines()[0][:200] if result else "(empty)"
        reply["text"] = [f"Tool {name or 'call'} finished: ", first_line]
        return reply

    if not tools:
        # Auxiliary call (title, summary, judge): a short neutral answer.
        reply["text"] = ["Interop session"]
        return reply

    scenario, user_text = _scenario(messages)
    if scenario == "THINK":
        reply["reasoning"] = ["Let me think about this. ", "A short greeting fits."]
        reply["text"] = ["Hello after ", "thinking."]
    elif scenario == "TOOL" and "glob" in tools:
        reply["text"] = ["Let me look for Markdown files. "]
        reply["tool"] = {"name": "glob", "arguments": {"pattern": "*.md"}}
    elif scenario == "PERM" and "bash" in tools:
        match = FILE_RE.search(user_text)
        name = match.group(1) if match else DEFAULT_PERM_FILE
        reply["text"] = ["I will create a file. "]
        reply["tool"] = {
            "name": "bash",
            "arguments": {"command": f"printf {PERM_FILE_TEXT} > {name}", "description": "Write a file"},
        }
    elif scenario == "SLOW":
        match = DELAY_RE.search(user_text)
        reply["delay"] = float(match.group(1)) if match else 0.5
        reply["text"] = [f"tick {i} " for i in range(40)]
    elif scenario == "FAIL":
        reply["error"] = "Scripted provider failure."
    else:
        reply["text"] = ["Hello! ", "How can I help?"]
    return reply


def stream_chunks(reply: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    """Turn a planned reply into OpenAI ``chat.completion.chunk`` payloads (without delays)."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": piece} for piece in reply["reasoning"]]
    deltas += [{"content": piece} for piece in reply["text"]]
    finish = "stop"
    tool = reply["tool"]
    if tool is not None:
        args = json.dumps(tool["arguments"], ensure_ascii=False)
        half = len(args) // 2
        deltas.append(
            {
                "tool_calls": [
                    {"index": 0, "id": call_id, "type": "function", "function": {"name": tool["name"], "arguments": ""}}
                ]
            }
        )
        deltas.append({"tool_calls": [{"index": 0, "function": {"arguments": args[:half]}}]})
        deltas.append({"tool_calls": [{"index": 0, "function": {"arguments": args[half:]}}]})
        finish = "tool_calls"
    chunks = [_chunk(call_id, {"delta": d, "finish_reason": None}) for d in deltas]
    chunks.append(_chunk(call_id, {"delta": {}, "finish_reason": finish}))
    usage_chunk = _chunk(call_id, None)
    usage_chunk["usage"] = USAGE
    chunks.append(usage_chunk)
    return chunks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append every request body as one JSON line")
    args = parser.parse_args(argv)
    server = start_server(args.host, args.port, args.log)
    port = server.server_address[1]
    print(json.dumps({"fakeLlm": {"port": port, "baseUrl": f"http://{args.host}:{port}/v1"}}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


# ---------------------------------------------------------------- helpers


def _plan_pipeline_step(messages: list[dict[str, Any]], tools: set[str], reply: dict[str, Any]) -> dict[str, Any]:
    """Pipeline steps: ask one question, then complete the step with the answer.

    The conclusion marks the request as non-infrastructure (``is_infra_intent``
    false), which is the selling pipeline's early-exit condition, so the
    pipeline completes right after the answer without any cloud calls.
    """
    answer = _question_answer(messages)
    if answer is None and "ask_user_question" in tools:
        reply["reasoning"] = ["Need clarification."]
        reply["text"] = ["Let me ask you a question. "]
        reply["tool"] = {
            "name": "ask_user_question",
            "arguments": {
                "question": "Which region?",
                "options": REGION_OPTIONS,
                "allow_free_text": True,
                "free_text_prompt": "Or type a region",
            },
        }
        return reply
    answer = answer or {}
    conclusion: dict[str, Any] = {
        "is_infra_intent": False,
        "confidence": "high",
        "category": "chat",
        "user_message_summary": "interop test request, not an infrastructure need",
    }
    if answer.get("selected_id"):
        conclusion["clarification_choice"] = answer["selected_id"]
    if answer.get("free_text"):
        conclusion["clarification_text"] = answer["free_text"]
    last = messages[-1] if messages else {}
    if last.get("role") == "tool" and _tool_name_for_call(messages, last.get("tool_call_id")) == "complete_step":
        # The step rejected or acknowledged our conclusion; do not loop.
        reply["text"] = ["Step submitted."]
        return reply
    reply["text"] = ["Thanks, noted. "]
    reply["tool"] = {"name": "complete_step", "arguments": {"conclusion": conclusion}}
    return reply


def _question_answer(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The parsed result of the latest ``ask_user_question`` call, if any."""
    for msg in reversed(messages):
        if msg.get("role") != "tool":
            continue
        if _tool_name_for_call(messages, msg.get("tool_call_id")) != "ask_user_question":
            continue
        try:
            value = json.loads(_content_text(msg.get("content")))
        except ValueError:
            return {"free_text": _content_text(msg.get("content"))}
        return value if isinstance(value, dict) else {}
    return None


def _scenario(messages: list[dict[str, Any]]) -> tuple[str, str]:
    for msg in reversed(messages):
        if msg.get("role") != "user":
            continue
        text = _content_text(msg.get("content"))
        found = SCENARIO_RE.findall(text)
        if found:
            return found[-1], text
    return "PLAIN", ""


def _tool_names(tools: Any) -> set[str]:
    names = set()
    for tool in tools or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.add(fn["name"])
    return names


def _tool_name_for_call(messages: list[dict[str, Any]], call_id: Any) -> str | None:
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            if call.get("id") == call_id:
                return (call.get("function") or {}).get("name")
    return None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _call_id(body: dict[str, Any]) -> str:
    """Deterministic per conversation, distinct across turns and conversations."""
    digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
    return f"call_{digest[:12]}"


def _chunk(call_id: str, choice: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{call_id[5:]}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL_ID,
        "choices": [] if choice is None else [{"index": 0, **choice}],
    }


def _completion(reply: dict[str, Any], call_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reply["text"]) or None}
    if reply["reasoning"]:
        message["reasoning_content"] = "".join(reply["reasoning"])
    finish = "stop"
    if reply["tool"] is not None:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": reply["tool"]["name"], "arguments": json.dumps(reply["tool"]["arguments"])},
            }
        ]
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{call_id[5:]}",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": USAGE,
    }


class _Handler(BaseHTTPRequestHandler):
    server_version = "fake-llm/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._json(
                200,
                {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "interop"}]},
            )
        else:
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        reply = plan_reply(body)
        self._log(body, reply)
        if reply["error"]:
            self._json(
                400, {"error": {"message": reply["error"], "type": "invalid_request_error", "code": "scripted_failure"}}
            )
            return
        call_id = _call_id(body)
        if not body.get("stream"):
            self._json(200, _completion(reply, call_id))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for chunk in stream_chunks(reply, call_id):
                if reply["delay"] and chunk["choices"] and "content" in chunk["choices"][0]["delta"]:
                    time.sleep(reply["delay"])
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the runtime cancelled the call
        self.close_connection = True

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _log(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
        path = getattr(self.server, "log_path", None)
        if not path:
            return
        line = json.dumps({"request": body, "reply": reply}, ensure_ascii=False)
        with self.server.log_lock, open(path, "a", encoding="utf-8") as fh:  # type: ignore[attr-defined]
            fh.write(line + "\n")


if __name__ == "__main__":
    sys.exit(main())
