#!/usr/bin/env python3
"""Drive the REAL ``iac-code a2a`` runtime over A2A through every interop scenario.

Starts the scripted LLM and the runtime (``run_runtime.Runtime``), then runs
each scenario directly against A2A with a stdlib client and checks what the
runtime actually sends. Prints one line per scenario, writes the detailed
results as JSON (``--out``), and ends with ``N passed, N failed``; exits 1 if
any scenario failed or the runtime could not start (never skips).

    smoke.py [--venv DIR] [--out results.json] [--capture DIR] [--only NAME ...]

``--capture`` saves the raw SSE bytes of every stream (paths rewritten to
``/workspace``) for comparison with ``shared/fixtures/a2a``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any
from collections.abc import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_llm  # noqa: E402
from a2a_client import A2AClient, Stream, context_id_for, state_of, task_id_of, user_message  # noqa: E402
from run_runtime import DEFAULT_VENV, Runtime  # noqa: E402

PIPELINE_META = {"run_mode": "pipeline", "pipeline_name": "selling"}
DENIED_PREFIX = "The user explicitly denied this tool operation"


class CheckFailedError(AssertionError):
    pass


def check(cond: Any, what: str) -> None:
    if not cond:
        raise CheckFailedError(what)


class Smoke:
    def __init__(self, rt: Runtime, capture: Path | None) -> None:
        self.rt = rt
        self.capture = capture
        self.client = A2AClient(rt.a2a_url or "", rt.token)
        self.notes: dict[str, Any] = {}

    @property
    def cwd(self) -> str:
        return str(self.rt.workspace)

    # ------------------------------------------------------------ helpers

    def send(self, name: str, params: dict[str, Any]) -> Stream:
        stream = self.client.stream("SendStreamingMessage", params)
        self._save(name, stream)
        return stream

    def new_run(self, name: str, text: str, thread: str, **meta: Any) -> tuple[Stream, str, str]:
        ctx = context_id_for(thread)
        stream = self.send(name, user_message(text, context_id=ctx, cwd=self.cwd, extra_meta=meta or None))
        check(
            stream.status == 200 and stream.content_type.startswith("text/event-stream"),
            f"{name}: expected SSE, got {stream.status} {stream.content_type} {stream.body}",
        )
        results = stream.results()
        check(results and "task" in results[0], f"{name}: first frame is not a task: {results[:1]}")
        check(state_of(results[0]) == "TASK_STATE_SUBMITTED", f"{name}: first task not SUBMITTED")
        task_id = task_id_of(stream)
        check(task_id, f"{name}: no task id")
        return stream, task_id, ctx

    def pending_input(self, stream: Stream) -> dict[str, Any]:
        inputs = [m["input"] for m in stream.iac() if (m.get("input") or {}).get("required")]
        check(inputs, f"no pending input in stream; states {stream.states()}")
        return inputs[-1]

    def answer_permission(self, name: str, inp: dict[str, Any], ctx: str, decision: str, run_id: str) -> Stream:
        payload = {
            "schemaVersion": 1,
            "kind": "permission",
            "requestTaskId": inp["requestTaskId"],
            "inputId": inp["inputId"],
            "toolUseId": inp["toolUseId"],
            "decision": decision,
        }
        params = user_message(
            None,
            context_id=ctx,
            cwd=self.cwd,
            task_id=inp["requestTaskId"],
            data=payload,
            message_id=f"agui-resume-{run_id}-{inp['inputId']}",
        )
        return self.send(name, params)

    def _save(self, name: str, stream: Stream) -> None:
        if self.capture is None:
            return
        self.capture.mkdir(parents=True, exist_ok=True)
        raw = stream.raw.replace(str(self.rt.root).encode(), b"/workspace")
        (self.capture / f"{name}.raw").write_bytes(raw)

    def tools(self, stream: Stream) -> list[dict[str, Any]]:
        return [m["tool"] for m in stream.iac() if "tool" in m]

    # ------------------------------------------------------------ scenarios

    def s_plain(self) -> dict[str, Any]:
        stream, task_id, _ = self.new_run("plain", "SCENARIO_PLAIN hello", "thr-plain")
        check(b"\r\n\r\n" in stream.raw, "plain: SSE frames not CRLF-terminated")
        check(stream.texts("-message") == "Hello! How can I help?", f"plain: deltas {stream.texts()!r}")
        check(stream.texts(f"{task_id}-2") == "Hello! How can I help?", "plain: no assistant final T-2")
        iac = stream.iac()
        check(any("assistantFinal" in m for m in iac), "plain: no assistantFinal")
        usage = [m["usage"] for m in iac if "usage" in m]
        expected = {"inputTokens": 120, "outputTokens": 15, "cachedInputTokens": 100, "totalTokens": 235}
        check(usage and {k: usage[0].get(k) for k in expected} == expected, f"plain: usage {usage}")
        check(stream.states()[-1] == "TASK_STATE_INPUT_REQUIRED", f"plain: last state {stream.states()[-1]}")
        check(iac[0].get("iacCodeSessionId"), "plain: no session id on SUBMITTED")
        return {"frames": len(stream.frames), "states": _dedup(stream.states()), "usage": usage[0]}

    def s_reasoning(self) -> dict[str, Any]:
        stream, _, _ = self.new_run("think", "SCENARIO_THINK hi", "thr-think")
        thinking = [m["thinking"] for m in stream.iac() if "thinking" in m]
        check(thinking and all(t["type"] == "raw_thinking" for t in thinking), f"think: {thinking}")
        check(
            "".join(t["text"] for t in thinking) == "Let me think about this. A short greeting fits.",
            f"think: text {thinking}",
        )
        check(stream.texts() == "Hello after thinking.", f"think: answer {stream.texts()!r}")
        first_thinking = next(i for i, m in enumerate(stream.iac()) if "thinking" in m)
        check(first_thinking < len(stream.iac()) - 3, "think: thinking after the answer")
        return {"thinkingFrames": len(thinking), "states": _dedup(stream.states())}

    def s_read_only_tool(self) -> dict[str, Any]:
        (self.rt.workspace / "notes.md").write_text("# notes\n")
        stream, _, _ = self.new_run("tool", "SCENARIO_TOOL list markdown", "thr-tool")
        tools = self.tools(stream)
        statuses = [t["status"] for t in tools]
        check(
            statuses[0] == "started" and "input_complete" in statuses and statuses[-1] == "completed",
            f"tool: statuses {statuses}",
        )
        complete = next(t for t in tools if t["status"] == "input_complete")
        check(complete["name"] == "glob" and complete["toolInput"] == {"pattern": "*.md"}, f"tool: {complete}")
        done = tools[-1]
        check("notes.md" in str(done["result"]), f"tool: result {done['result']!r}")
        check(not any((m.get("input") or {}).get("required") for m in stream.iac()), "tool: glob asked permission")
        check("Tool glob finished" in stream.texts(), f"tool: answer {stream.texts()!r}")
        check(stream.states()[-1] == "TASK_STATE_INPUT_REQUIRED", "tool: last state")
        return {"toolStatuses": _dedup(statuses), "result": str(done["result"])[:120]}

    def _permission_run(self, name: str, file_name: str) -> tuple[Stream, dict[str, Any], str]:
        stream, task_id, ctx = self.new_run(f"{name}_1", f"SCENARIO_PERM file={file_name}", f"thr-{name}")
        check(stream.states()[-1] == "TASK_STATE_INPUT_REQUIRED", f"{name}: run 1 last state")
        inp = self.pending_input(stream)
        check(inp["kind"] == "permission" and inp["toolName"] == "bash", f"{name}: input {inp}")
        check(inp["requestTaskId"] == task_id and inp["contextId"] == ctx, f"{name}: input ids {inp}")
        check(inp["inputId"].startswith("permission-"), f"{name}: inputId {inp['inputId']}")
        check([o["id"] for o in inp["options"]] == ["allow_once", "deny"], f"{name}: options {inp['options']}")
        check(not (self.rt.workspace / file_name).exists(), f"{name}: file written before the answer")
        return stream, inp, ctx

    def _resume_prelude(self, name: str, task_id: str, ctx: str, session: str) -> dict[str, Any]:
        status, body = self.client.post_json(
            "/iac-code/session/ensure-restored", {"cwd": self.cwd, "sessionId": session, "taskId": task_id}
        )
        check(
            status == 200 and body.get("status") in ("current", "restored"), f"{name}: ensure-restored {status} {body}"
        )
        got = self.client.call("GetTask", {"id": task_id, "historyLength": 100})
        check(got.get("result", {}).get("id") == task_id, f"{name}: GetTask {str(got)[:300]}")
        check(got["result"]["contextId"] == ctx, f"{name}: GetTask context")
        st, _ = self.client.get_json("/iac-code/pipeline/state", {"taskId": task_id, "afterSequence": 0})
        return {"ensureRestored": body.get("status"), "getTaskState": state_of(got["result"]), "pipelineState": st}

    def s_permission_allow(self) -> dict[str, Any]:
        file_name = "perm-allow.txt"
        run1, inp, ctx = self._permission_run("perm_allow", file_name)
        session = next(m["iacCodeSessionId"] for m in run1.iac() if m.get("iacCodeSessionId"))
        prelude = self._resume_prelude("perm_allow", inp["requestTaskId"], ctx, session)
        run2 = self.answer_permission("perm_allow_2", inp, ctx, "allow_once", "run2")
        check(run2.content_type.startswith("text/event-stream"), f"perm_allow: answer rejected {run2.body}")
        check("task" not in run2.results()[0], "perm_allow: answer stream starts with a task frame")
        check(run2.iac()[0].get("inputReceived", {}).get("inputId") == inp["inputId"], "perm_allow: no inputReceived")
        tools = self.tools(run2)
        check(
            tools and tools[-1]["status"] == "completed" and tools[-1]["toolUseId"] == inp["toolUseId"],
            f"perm_allow: tools {tools}",
        )
        path = self.rt.workspace / file_name
        check(path.exists() and path.read_text() == fake_llm.PERM_FILE_TEXT, "perm_allow: file missing or wrong")
        check(run2.states()[-1] == "TASK_STATE_INPUT_REQUIRED", f"perm_allow: last {run2.states()[-1]}")
        dup = self.answer_permission("perm_allow_dup", inp, ctx, "allow_once", "run3")
        dup_received = [m["inputReceived"] for m in dup.iac() if "inputReceived" in m]
        check(dup_received and dup_received[0].get("duplicate") is True, f"perm_allow: duplicate answer {dup.iac()}")
        return {
            **prelude,
            "toolResult": str(tools[-1].get("result"))[:80],
            "fileWritten": True,
            "answerStates": _dedup(run2.states()),
            "duplicateAnswerStates": _dedup(dup.states()),
            "duplicateInputReceived": dup_received[0],
        }

    def s_permission_deny(self) -> dict[str, Any]:
        file_name = "perm-deny.txt"
        _, inp, ctx = self._permission_run("perm_deny", file_name)
        run2 = self.answer_permission("perm_deny_2", inp, ctx, "deny", "run2")
        check(run2.content_type.startswith("text/event-stream"), f"perm_deny: answer rejected {run2.body}")
        tools = self.tools(run2)
        check(tools and tools[-1]["status"] == "failed", f"perm_deny: tools {tools}")
        check(str(tools[-1].get("result", "")).startswith(DENIED_PREFIX), f"perm_deny: result {tools[-1]}")
        check(not (self.rt.workspace / file_name).exists(), "perm_deny: file written despite deny")
        check(run2.states()[-1] == "TASK_STATE_INPUT_REQUIRED", f"perm_deny: last {run2.states()[-1]}")
        return {"toolStatus": "failed", "fileWritten": False, "answerStates": _dedup(run2.states())}

    def s_permission_cancel(self) -> dict[str, Any]:
        file_name = "perm-cancel.txt"
        _, inp, _ = self._permission_run("perm_cancel", file_name)
        resp = self.client.call("CancelTask", {"id": inp["requestTaskId"]})
        check(state_of(resp.get("result", {})) == "TASK_STATE_CANCELED", f"perm_cancel: CancelTask {str(resp)[:300]}")
        got = self.client.call("GetTask", {"id": inp["requestTaskId"], "historyLength": 100})
        check(state_of(got["result"]) == "TASK_STATE_CANCELED", "perm_cancel: GetTask not CANCELED")
        check(not (self.rt.workspace / file_name).exists(), "perm_cancel: file written despite cancel")
        again = self.client.call("CancelTask", {"id": inp["requestTaskId"]})
        return {
            "cancelState": "TASK_STATE_CANCELED",
            "secondCancel": again.get("error", {}).get("code")
            if "error" in again
            else state_of(again.get("result", {})),
        }

    def _pipeline_question(self, name: str) -> tuple[Stream, dict[str, Any], str]:
        stream, task_id, ctx = self.new_run(
            f"{name}_1", "SCENARIO_PIPE I need a website", f"thr-{name}", **PIPELINE_META
        )
        check(stream.states()[-1] == "TASK_STATE_INPUT_REQUIRED", f"{name}: run 1 last {stream.states()[-1]}")
        envs = [m["pipeline"] for m in stream.iac() if "pipeline" in m]
        types = [e["eventType"] for e in envs]
        check(
            types[0] == "pipeline_started" and "step_started" in types and types[-1] == "input_required",
            f"{name}: events {types}",
        )
        check("thinking_delta" in types, f"{name}: no thinking_delta in {types}")
        inp = self.pending_input(stream)
        check(inp["kind"] == "ask_user_question" and inp["inputId"] == f"ask-{inp['toolUseId']}", f"{name}: {inp}")
        check([o["id"] for o in inp["options"]] == ["cn-hangzhou", "cn-beijing"], f"{name}: options")
        check(inp["requestTaskId"] == task_id, f"{name}: requestTaskId")
        return stream, inp, ctx

    def _pipeline_answer(self, name: str, inp: dict[str, Any], ctx: str, text: str, last_seq: int) -> Stream:
        st, state = self.client.get_json(
            "/iac-code/pipeline/state", {"taskId": inp["requestTaskId"], "afterSequence": last_seq}
        )
        check(st == 200 and state["snapshot"]["status"] == "waiting_input", f"{name}: pipeline/state {st}")
        check(state["snapshot"]["pendingInput"]["inputId"] == inp["inputId"], f"{name}: snapshot pendingInput")
        params = user_message(
            text,
            context_id=ctx,
            cwd=self.cwd,
            task_id=inp["requestTaskId"],
            message_id="agui-resume-run2",
            extra_meta=PIPELINE_META,
        )
        stream = self.send(f"{name}_2", params)
        check(stream.content_type.startswith("text/event-stream"), f"{name}: answer rejected {stream.body}")
        envs = [m["pipeline"] for m in stream.iac() if "pipeline" in m]
        types = [e["eventType"] for e in envs]
        check(types and types[0] == "input_received", f"{name}: answer events {types}")
        check("pipeline_completed" in types, f"{name}: no pipeline_completed in {types}")
        completed = next(e for e in envs if e["eventType"] == "pipeline_completed")
        check(completed["data"].get("earlyExit") is True, f"{name}: not an early exit {completed['data']}")
        check("TASK_STATE_COMPLETED" in stream.states(), f"{name}: no COMPLETED state")
        return stream

    def s_pipeline_option(self) -> dict[str, Any]:
        run1, inp, ctx = self._pipeline_question("pipe_option")
        last_seq = int(max(m["pipeline"]["sequence"] for m in run1.iac() if "pipeline" in m))
        run2 = self._pipeline_answer("pipe_option", inp, ctx, "Beijing", last_seq)
        received = run2.iac()[0]["pipeline"]["data"]
        check(received["selectedId"] == "cn-beijing" and received["freeText"] == "", f"pipe_option: {received}")
        return {
            "run1Events": len(run1.frames),
            "selectedId": received["selectedId"],
            "answerStates": _dedup(run2.states()),
        }

    def s_pipeline_free_text(self) -> dict[str, Any]:
        run1, inp, ctx = self._pipeline_question("pipe_free")
        last_seq = int(max(m["pipeline"]["sequence"] for m in run1.iac() if "pipeline" in m))
        run2 = self._pipeline_answer("pipe_free", inp, ctx, "Or maybe Shanghai please", last_seq)
        received = run2.iac()[0]["pipeline"]["data"]
        check(
            received["selectedId"] == "" and received["freeText"] == "Or maybe Shanghai please",
            f"pipe_free: {received}",
        )
        return {"freeText": received["freeText"], "answerStates": _dedup(run2.states())}

    def s_cancel_running(self) -> dict[str, Any]:
        ctx = context_id_for("thr-cancel")
        it = self.client.open_stream(
            "SendStreamingMessage", user_message("SCENARIO_SLOW delay=0.3", context_id=ctx, cwd=self.cwd)
        )
        stream = next(it)
        check(stream.content_type.startswith("text/event-stream"), f"cancel: {stream.body}")
        cancel_resp: dict[str, Any] = {}
        for _ in it:
            if cancel_resp or "tick 2" not in stream.texts():
                continue
            task_id = task_id_of(stream)
            cancel_resp = self.client.call("CancelTask", {"id": task_id})
        self._save("cancel", stream)
        check(cancel_resp, "cancel: the stream ended before the task could be cancelled")
        check(state_of(cancel_resp.get("result", {})) == "TASK_STATE_CANCELED", f"cancel: {str(cancel_resp)[:300]}")
        check("TASK_STATE_CANCELED" in stream.states(), f"cancel: stream states {_dedup(stream.states())}")
        check("tick 39" not in stream.texts(), "cancel: the answer ran to completion")
        cancel_text = stream.texts("-5")
        again = self.client.call("CancelTask", {"id": task_id_of(stream)})
        return {
            "streamStates": _dedup(stream.states()),
            "cancelText": cancel_text,
            "lastState": stream.states()[-1],
            "secondCancel": again.get("error", {}).get("code") if "error" in again else "ok",
        }

    def s_subscribe_active(self) -> dict[str, Any]:
        ctx = context_id_for("thr-subscribe")
        it = self.client.open_stream(
            "SendStreamingMessage", user_message("SCENARIO_SLOW delay=0.3", context_id=ctx, cwd=self.cwd)
        )
        stream = next(it)
        out: dict[str, Any] = {}
        for _ in it:
            if out or "tick 1" not in stream.texts():
                continue
            task_id = task_id_of(stream)
            sub_it = self.client.open_stream("SubscribeToTask", {"id": task_id})
            sub = next(sub_it)
            check(sub.content_type.startswith("text/event-stream"), f"subscribe: not SSE {sub.body}")
            first = next(sub_it)
            check("task" in first.get("result", {}), f"subscribe: first frame {str(first)[:200]}")
            snapshot = first["result"]["task"]
            out["firstFrame"] = "task"
            out["snapshotState"] = state_of(snapshot)
            out["snapshotHasExecutionControl"] = "executionControl" in (snapshot.get("metadata") or {}).get(
                "iac_code", {}
            )
            self.client.call("CancelTask", {"id": task_id})
            for _frame in sub_it:
                pass
            out["subscribeStates"] = _dedup(sub.states())
        check(out, "subscribe: stream ended before the subscription")
        check("TASK_STATE_CANCELED" in out["subscribeStates"], f"subscribe: {out['subscribeStates']}")
        inactive = self.client.stream("SubscribeToTask", {"id": task_id_of(stream)})
        out["inactive"] = {
            "contentType": inactive.content_type.split(";")[0],
            "error": (inactive.body or {}).get("error", {}).get("code"),
        }
        check(out["inactive"]["error"] == -32001, f"subscribe: inactive {inactive.body}")
        return out

    def s_message_to_running_task(self) -> dict[str, Any]:
        ctx = context_id_for("thr-busy")
        it = self.client.open_stream(
            "SendStreamingMessage", user_message("SCENARIO_SLOW delay=0.1", context_id=ctx, cwd=self.cwd)
        )
        stream = next(it)
        busy: Stream | None = None
        for _ in it:
            if busy is None and "tick 1" in stream.texts():
                busy = self.send(
                    "busy_2",
                    user_message("SCENARIO_PLAIN while busy", context_id=ctx, cwd=self.cwd, task_id=task_id_of(stream)),
                )
        self._save("busy_1", stream)
        check(busy is not None, "busy: the first stream ended too early")
        assert busy is not None
        failed = [
            r["statusUpdate"]["status"]
            for r in busy.results()
            if state_of(r) == "TASK_STATE_FAILED" and "statusUpdate" in r
        ]
        check(
            failed and failed[0]["message"]["parts"][0]["text"].startswith("Task is already working"),
            f"busy: second stream {_dedup(busy.states())}",
        )
        check(
            stream.states()[-1] == "TASK_STATE_INPUT_REQUIRED" and "tick 39" in stream.texts(),
            f"busy: the running task did not finish: {_dedup(stream.states())}",
        )
        return {
            "secondStreamStates": _dedup(busy.states()),
            "secondStreamLiveDeltas": sum(1 for r in busy.results() if state_of(r) == "TASK_STATE_WORKING"),
            "failedMessageId": failed[0]["message"]["messageId"].rsplit("-", 1)[-1],
            "firstStreamStates": _dedup(stream.states()),
        }

    def s_text_to_permission_wait(self) -> dict[str, Any]:
        file_name = "perm-text.txt"
        _, inp, ctx = self._permission_run("perm_text", file_name)
        turn = self.send(
            "perm_text_2",
            user_message("SCENARIO_PLAIN are you there", context_id=ctx, cwd=self.cwd, task_id=inp["requestTaskId"]),
        )
        check(turn.content_type.startswith("text/event-stream"), f"perm_text: text refused {turn.body}")
        check(
            turn.texts() == "Hello! How can I help?" and turn.states()[-1] == "TASK_STATE_INPUT_REQUIRED",
            f"perm_text: new turn {_dedup(turn.states())} {turn.texts()!r}",
        )
        check(not (self.rt.workspace / file_name).exists(), "perm_text: the text ran the tool")
        answer = self.answer_permission("perm_text_3", inp, ctx, "allow_once", "run3")
        tools = self.tools(answer)
        check(
            (self.rt.workspace / file_name).exists(),
            f"perm_text: parked permission not applied: {answer.body or _dedup(answer.states())} {tools}",
        )
        return {
            "textTurnStates": _dedup(turn.states()),
            "answerStates": _dedup(answer.states()),
            "answerFirstKeys": sorted(k for k in answer.iac()[0] if k != "iacCodeSessionId"),
            "fileWrittenAfterAnswer": True,
        }

    def s_provider_failure(self) -> dict[str, Any]:
        stream, task_id, _ = self.new_run("fail", "SCENARIO_FAIL", "thr-fail")
        states = stream.states()
        check("TASK_STATE_FAILED" in states, f"fail: no FAILED state in {_dedup(states)}")
        errors = [m["error"] for m in stream.iac() if "error" in m]
        check(errors and errors[0].get("retryable") is False, f"fail: error metadata {errors}")
        seen = []
        for _ in range(3):
            got = self.client.call("GetTask", {"id": task_id, "historyLength": 100})["result"]
            control = (got.get("metadata") or {}).get("iac_code", {}).get("executionControl", {})
            seen.append([state_of(got), control.get("executionStatus")])
            time.sleep(1)
        return {
            "states": _dedup(states),
            "lastState": states[-1],
            "errorText": stream.texts()[:120],
            "getTaskOverThreeSeconds": seen,
        }

    def s_rejected_requests(self) -> dict[str, Any]:
        """Requests the runtime refuses before streaming: plain JSON errors, not SSE."""
        out: dict[str, Any] = {}

        def rejected(name: str, params: dict[str, Any], code: int, message_start: str) -> None:
            stream = self.client.stream("SendStreamingMessage", params)
            error = (stream.body or {}).get("error") if isinstance(stream.body, dict) else None
            check(
                stream.status == 200 and stream.content_type.startswith("application/json") and error,
                f"rejected/{name}: {stream.status} {stream.content_type} {stream.raw[:200]!r}",
            )
            check(error["code"] == code and error["message"].startswith(message_start), f"rejected/{name}: {error}")
            out[name] = f"{error['code']} {error['message']}"

        def msg(text: str | None = "x", ctx: str = "ctx-rej", **kw: Any) -> dict[str, Any]:
            return user_message(text, context_id=ctx, cwd=kw.pop("cwd", self.cwd), **kw)

        no_parts = msg()
        no_parts["message"]["parts"] = []
        rejected("noParts", no_parts, -32602, "Validation failed")
        rejected("badRunMode", msg(extra_meta={"run_mode": "turbo"}), -32602, "Unsupported run mode.")
        rejected(
            "badPipelineName",
            msg(extra_meta={"run_mode": "pipeline", "pipeline_name": "nope"}),
            -32602,
            "Unsupported pipeline name.",
        )
        rejected("badContextId", msg(ctx="bad ctx!"), -32603, "Invalid A2A id")

        bad_cwd = self.send("bad_cwd", msg(ctx="ctx-rej-cwd", cwd="/etc"))
        check(
            bad_cwd.states()[-1] == "TASK_STATE_FAILED" and bad_cwd.texts("-4") == "Invalid A2A workspace metadata.",
            f"rejected/badCwd: {_dedup(bad_cwd.states())} {bad_cwd.texts('')!r}",
        )
        out["cwdOutsideRoots"] = f"stream: {' -> '.join(_dedup(bad_cwd.states()))}, {bad_cwd.texts('-4')!r}"

        _, inp, ctx = self._permission_run("perm_rejects", "perm-rejects.txt")
        base = {
            "schemaVersion": 1,
            "kind": "permission",
            "requestTaskId": inp["requestTaskId"],
            "inputId": inp["inputId"],
            "toolUseId": inp["toolUseId"],
            "decision": "allow_once",
        }
        tid = inp["requestTaskId"]
        rejected(
            "unknownInputId",
            msg(None, ctx, task_id=tid, data={**base, "inputId": "permission-" + "0" * 32}),
            -32602,
            "permission_resume_invalid",
        )
        rejected(
            "extraPayloadKey",
            msg(None, ctx, task_id=tid, data={**base, "note": "x"}),
            -32602,
            "Permission response payload fields do not match",
        )
        rejected(
            "badDecision",
            msg(None, ctx, task_id=tid, data={**base, "decision": "allow_always"}),
            -32602,
            "Permission decision must be allow_once or deny.",
        )
        rejected(
            "wrongToolUseId",
            msg(None, ctx, task_id=tid, data={**base, "toolUseId": "call_x"}),
            -32602,
            "input_response_mismatch",
        )
        rejected("wrongContext", msg(None, "ctx-other", task_id=tid, data=base), -32602, "bad context id")
        check(not (self.rt.workspace / "perm-rejects.txt").exists(), "rejected: a refused answer ran the tool")
        return out

    def s_protocol_errors(self) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", "id": "x", "method": "GetTask", "params": {"id": "nope"}}).encode()
        base = {"Content-Type": "application/json"}
        lowercase = {**base, "A2A-Version": "1.0", "Authorization": "bearer " + self.rt.token}
        st, _, raw = self.client.raw_post(body, lowercase)
        check(
            st == 401 and json.loads(raw) == {"error": "Unauthorized"}, f"errors: lowercase bearer {st} {raw[:100]!r}"
        )
        st, _, raw = self.client.raw_post(body, {**base, "Authorization": "Bearer " + self.rt.token})
        no_version = json.loads(raw)
        check(no_version.get("error", {}).get("code") == -32009, f"errors: no A2A-Version {raw[:200]!r}")
        missing = self.client.call("GetTask", {"id": "nope"})
        check(missing.get("error", {}).get("code") == -32001, f"errors: GetTask unknown {missing}")
        st, state = self.client.get_json("/iac-code/pipeline/state", {"taskId": "nope", "afterSequence": 0})
        check(st == 404, f"errors: pipeline/state unknown {st}")
        return {"lowercaseBearer": 401, "noVersion": -32009, "unknownTask": -32001, "pipelineStateUnknown": st}

    def s_permission_after_restart(self) -> dict[str, Any]:
        file_name = "perm-restart.txt"
        run1, inp, ctx = self._permission_run("perm_restart", file_name)
        session = next(m["iacCodeSessionId"] for m in run1.iac() if m.get("iacCodeSessionId"))
        timing = self.rt.restart_a2a()
        self.client = A2AClient(self.rt.a2a_url or "", self.rt.token)
        prelude = self._resume_prelude("perm_restart", inp["requestTaskId"], ctx, session)
        run2 = self.answer_permission("perm_restart_2", inp, ctx, "allow_once", "run2")
        check(run2.content_type.startswith("text/event-stream"), f"perm_restart: answer rejected {run2.body}")
        path = self.rt.workspace / file_name
        tools = self.tools(run2)
        check(path.exists(), f"perm_restart: file missing; states {_dedup(run2.states())}; tools {tools}")
        return {**prelude, "answerStates": _dedup(run2.states()), "fileWritten": True, "restart": timing}

    def s_pipeline_after_restart(self) -> dict[str, Any]:
        run1, inp, ctx = self._pipeline_question("pipe_restart")
        last_seq = int(max(m["pipeline"]["sequence"] for m in run1.iac() if "pipeline" in m))
        session = next(m["pipeline"]["iacCodeSessionId"] for m in run1.iac() if "pipeline" in m)
        timing = self.rt.restart_a2a()
        self.client = A2AClient(self.rt.a2a_url or "", self.rt.token)
        prelude = self._resume_prelude("pipe_restart", inp["requestTaskId"], ctx, session)
        run2 = self._pipeline_answer("pipe_restart", inp, ctx, "Hangzhou", last_seq)
        received = next(
            m["pipeline"]["data"]
            for m in run2.iac()
            if "pipeline" in m and m["pipeline"]["eventType"] == "input_received"
        )
        check(received["selectedId"] == "cn-hangzhou", f"pipe_restart: {received}")
        types = [m["pipeline"]["eventType"] for m in run2.iac() if "pipeline" in m]
        return {**prelude, "answerEvents": _dedup(types)[:6], "answerStates": _dedup(run2.states()), "restart": timing}


SCENARIOS: list[tuple[str, Callable[[Smoke], dict[str, Any]]]] = [
    ("plain", Smoke.s_plain),
    ("reasoning", Smoke.s_reasoning),
    ("read_only_tool", Smoke.s_read_only_tool),
    ("permission_allow", Smoke.s_permission_allow),
    ("permission_deny", Smoke.s_permission_deny),
    ("permission_cancel_task", Smoke.s_permission_cancel),
    ("pipeline_question_option", Smoke.s_pipeline_option),
    ("pipeline_question_free_text", Smoke.s_pipeline_free_text),
    ("cancel_running_task", Smoke.s_cancel_running),
    ("subscribe_active_task", Smoke.s_subscribe_active),
    ("message_to_running_task", Smoke.s_message_to_running_task),
    ("text_to_permission_wait", Smoke.s_text_to_permission_wait),
    ("provider_failure", Smoke.s_provider_failure),
    ("rejected_requests", Smoke.s_rejected_requests),
    ("protocol_errors", Smoke.s_protocol_errors),
    # Last: these restart the runtime.
    ("permission_after_runtime_restart", Smoke.s_permission_after_restart),
    ("pipeline_answer_after_runtime_restart", Smoke.s_pipeline_after_restart),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Interop smoke test against the real iac-code A2A runtime.")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--out", type=Path, help="write detailed results as JSON here")
    parser.add_argument("--capture", type=Path, help="save raw SSE bytes per stream here")
    parser.add_argument("--only", nargs="*", help="run only these scenarios")
    parser.add_argument("--keep", action="store_true", help="keep the runtime temp dir")
    args = parser.parse_args(argv)

    # SIGTERM (e.g. from `timeout`) must still run the cleanup below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    wanted = [s for s in SCENARIOS if not args.only or s[0] in args.only]
    results: list[dict[str, Any]] = []
    started = time.monotonic()
    try:
        rt = Runtime(args.venv, keep=args.keep).start()
    except Exception as exc:  # noqa: BLE001 - reported, then a hard failure
        print(f"interop: runtime failed to start: {exc}", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    startup_s = round(time.monotonic() - started, 2)
    print(f"interop: runtime ready in {startup_s}s at {rt.a2a_url} (root {rt.root})", flush=True)
    try:
        smoke = Smoke(rt, args.capture)
        for name, fn in wanted:
            t0 = time.monotonic()
            entry: dict[str, Any] = {"scenario": name}
            try:
                entry["details"] = _with_deadline(lambda fn=fn: fn(smoke), 180)
                entry["outcome"] = "pass"
            except Exception as exc:  # noqa: BLE001 - one scenario's failure must not hide the others
                entry["outcome"] = "fail"
                entry["error"] = f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, CheckFailedError):
                    entry["trace"] = traceback.format_exc(limit=4)
            entry["seconds"] = round(time.monotonic() - t0, 2)
            results.append(entry)
            line = f"{entry['outcome'].upper():4} {name} ({entry['seconds']}s)"
            print(line + ("" if entry["outcome"] == "pass" else f": {entry['error']}"), flush=True)
    finally:
        rt.stop()
    passed = sum(1 for r in results if r["outcome"] == "pass")
    failed = len(results) - passed
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"runtimeStartupSeconds": startup_s, "results": results}, indent=2) + "\n")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and results else 1


def _with_deadline(fn: Callable[[], dict[str, Any]], seconds: int) -> dict[str, Any]:
    """Run ``fn`` on the main thread under SIGALRM, so a hung runtime fails the
    scenario instead of hanging CI (and a runtime restarted inside ``fn`` is
    started from the long-lived main thread, see ``run_runtime._die_with_parent``)."""

    def on_alarm(_sig: int, _frame: Any) -> None:
        raise CheckFailedError(f"scenario did not finish within {seconds}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _dedup(states: list[str]) -> list[str]:
    out: list[str] = []
    for s in states:
        if not out or out[-1] != s:
            out.append(s)
    return out


if __name__ == "__main__":
    sys.exit(main())
