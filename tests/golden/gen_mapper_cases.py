#!/usr/bin/env python3
"""Writes the inputs of the mapper golden cases (tests/golden/mapper/*.json).

Usage: gen_mapper_cases.py --fixtures <dir of the real A2A captures (live/)>

The `live-*` cases are the real captured streams of the iac-code 0.16.0 A2A
runtime turned into case inputs (frames copied verbatim); the others are
hand-written frames in the same shapes. Existing `expected` values are kept:
after changing an input, review and bless with
`BLESS=1 GOLDEN_FILTER=mapper/ cargo test -p iac-agui-tests --test golden`.
Cases that continue an earlier case (`chain`) start from that case's expected
durable state, so run generate + bless twice after changing a chained input.
"""

import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mapper")
CASES = {}


def case(name, description, steps, context=None, durable=None, chain=None, **extra):
    ctx = {"threadId": "thread-1", "runId": "run-1", "contextId": "ctx-1"}
    ctx.update(context or {})
    value = {"context": ctx, "idSeed": 7, "clock": {"startMs": 1767225600000, "tickMs": 10}, "steps": steps}
    if chain:
        value["durable"] = chained_durable(chain)
    elif durable is not None:
        value["durable"] = durable
    value.update(extra)
    CASES[name] = {"description": description, "kind": "mapper", "input": value}


def chained_durable(name):
    path = os.path.join(OUT, name + ".json")
    if not os.path.exists(path):
        return {"pipelineSequence": 0, "pipelineOpenSteps": [], "textSnapshotDigests": []}
    with open(path, encoding="utf-8") as f:
        return json.load(f).get("expected", {}).get("durable") or {}


# ---------------------------------------------------------------- builders

def su(state, text=None, iac=None, mid="task-1-message", task="task-1", ctx="ctx-1", role="ROLE_AGENT"):
    status = {"state": "TASK_STATE_" + state}
    if text is not None:
        status["message"] = {"messageId": mid, "contextId": ctx, "taskId": task, "role": role,
                             "parts": [{"text": text}]}
        if mid is None:
            del status["message"]["messageId"]
    body = {"taskId": task, "contextId": ctx, "status": status}
    if iac is not None:
        body["metadata"] = {"iac_code": iac}
    return {"frame": {"statusUpdate": body}}


def task_frame(state="SUBMITTED", iac=None, history=None, task="task-1", ctx="ctx-1", key="frame"):
    body = {"id": task, "contextId": ctx, "status": {"state": "TASK_STATE_" + state}}
    if history:
        body["history"] = history
    if iac is not None:
        body["metadata"] = {"iac_code": iac}
    return {key: {"task": body}} if key == "frame" else {key: body}


def hist(role, text, mid):
    return {"messageId": mid, "role": role, "parts": [{"text": text}]}


S = "sess-1"


def env(seq, etype, data=None, eid=None, scope="step", status="working", step=None, candidate=None,
        cstep=None, session=S, run="ctx-1"):
    e = {"schemaVersion": "1.0", "extensionUri": "urn:iac-code:a2a:pipeline-events:v1",
         "eventId": eid if eid is not None else "evt-%d" % seq, "sequence": float(seq),
         "eventType": etype, "scope": scope, "status": status, "pipelineRunId": run,
         "pipelineName": "selling", "taskId": "task-1", "contextId": "ctx-1"}
    if session:
        e["iacCodeSessionId"] = session
    if step:
        e["step"] = {"id": step, "runId": "step-%s-1" % step, "attempt": 1.0}
    if candidate:
        e["candidate"] = {"id": candidate, "runId": "candidate-%s-0-1" % candidate, "index": 0.0, "attempt": 1.0}
    if cstep:
        e["candidateStep"] = {"id": cstep, "runId": "candidate-%s-0-1-%s-1" % (candidate, cstep), "attempt": 1.0}
    if data is not None:
        e["data"] = data
    return e


def pipe(state, *envelopes, extra=None, batch=False):
    iac = {}
    if batch:
        iac["pipelineBatch"] = {"schemaVersion": "1.0", "extensionUri": "urn:iac-code:a2a:pipeline-events:v1",
                                "events": list(envelopes)}
    else:
        (iac["pipeline"],) = envelopes
    iac.update(extra or {})
    return su(state, iac=iac)


def sess(**kw):
    d = {"iacCodeSessionId": S}
    d.update(kw)
    return d


def perm_input(input_id="permission-1", tool="call_1", **kw):
    v = {"schemaVersion": 1.0, "kind": "permission", "requestTaskId": "task-1", "contextId": "ctx-1",
         "inputId": input_id, "toolUseId": tool, "toolName": "bash", "title": "Run a local shell command",
         "purpose": "Run a command.", "effect": "local_execution", "target": "workspace", "isReadOnly": False,
         "prompt": "Run a local shell command Allow once?", "safeSummary": "bash: ls",
         "options": [{"id": "allow_once", "label": "Allow once"}, {"id": "deny", "label": "Deny"}],
         "language": "en", "required": True}
    v.update(kw)
    return {k: val for k, val in v.items() if val is not None}


START = [task_frame(), su("SUBMITTED", iac=sess()), su("WORKING", iac=sess())]
END = [su("INPUT_REQUIRED", iac=sess())]


# ------------------------------------------------------------- live cases

def live_frames(fixtures, name, limit=None):
    with open(os.path.join(fixtures, "out_%s.json" % name), encoding="utf-8") as f:
        data = json.load(f)
    frames = [{"frame": e["result"]} for e in data["events"]]
    return frames[:limit] if limit else frames


def live_context(frames):
    for f in frames:
        body = next(iter(f["frame"].values()))
        if body.get("contextId"):
            return body["contextId"]
    return "ctx-1"


def live_cases(fixtures):
    def live(name, description, fixture, pre=None, chain=None, context=None, **kw):
        frames = live_frames(fixtures, fixture)
        ctx = {"contextId": live_context(frames)}
        ctx.update(context or {})
        case(name, description, (pre or []) + frames, context=ctx, chain=chain, **kw)

    live("live-plain", "Real capture: a plain answer; deltas share {taskId}-message, the assistantFinal "
         "repeat is skipped, usage summed, input-required ends the turn with success.", "plain")
    live("live-think", "Real capture: raw thinking becomes a reasoning span closed before the text starts.",
         "think")
    live("live-tool", "Real capture: a read-only tool (started, input_delta ignored, input_complete with "
         "inputSummary only, completed), then text.", "tool")
    live("live-perm1-a", "Real capture: a normal-mode permission wait ends the run with a tool_call "
         "interrupt; the open text is finalised into the durable digests.", "perm1_a")
    live("live-perm2-a", "Real capture: the stream answering the permission (first frame without a session "
         "id), the tool result, a new text, success.", "perm2_a", chain="live-perm1-a",
         context={"runId": "run-2", "appliedInputIds": ["permission-6fec5ec47c0b4643b8ef8c475ee659b1"]})
    live("live-deny1", "Real capture: the permission wait of the deny scenario.", "deny1")
    live("live-pipe1", "Real capture: a Pipeline run up to an ask_user_question interrupt bound to a tool; "
         "the step stays durably open.", "pipe1")
    live("live-pipe2", "Real capture: the answer stream of the question; the answered tool gets its "
         "result first, input_received re-opens the step, a second question follows.", "pipe2",
         pre=[{"answeredTool": {"toolCallId": "call_72c02488", "text": "Hangzhou"}}], chain="live-pipe1",
         context={"runId": "run-2", "appliedInputIds": ["ask-call_72c02488"]})
    live("live-pipe3", "Real capture: the last answer; the step completes, pipeline_completed is forwarded "
         "and its COMPLETED state ends the reading (the later out-of-order backup frames are not read).",
         "pipe3", chain="live-pipe2",
         context={"runId": "run-3", "appliedInputIds": ["ask-call_72c02488"]})
    live("live-fail", "Real capture: a provider error; the FAILED status text is shown, the frames after "
         "FAILED are ignored, RUN_ERROR A2A_EXECUTION_FAILED.", "fail")
    live("live-cancel", "Real capture: CancelTask; the 'Task canceled.' text then RUN_ERROR CANCELLED.",
         "cancel")
    def body(fixture):
        with open(os.path.join(fixtures, "out_%s.json" % fixture), encoding="utf-8") as f:
            data = json.load(f)["body"]
        return data.get("result", data)

    case("live-resume-pipe-recovery", "Real captures: a resume after a disconnect at sequence 5: the GetTask "
         "snapshot (no envelopes, no text; its pending question is reported, not ended on), the recovery "
         "response after sequence 5 (ACTIVITY_SNAPSHOT, then events 6–10), the answered tool's result, then "
         "the answer stream up to the next question.",
         [{"task": body("pipe_gettask")}, {"recovery": body("state_after5")},
          {"markApplied": "ask-call_72c02488"},
          {"answeredTool": {"toolCallId": "call_72c02488", "text": "Hangzhou"}}] + live_frames(fixtures, "pipe2"),
         context={"contextId": "ctx-pipe-1", "runId": "run-2"},
         durable={"pipelineSequence": 5, "pipelineOpenSteps": ["step:intent_parsing"], "textSnapshotDigests": []})
    case("live-recovery-full", "Real captures: GetTask snapshot and a full recovery from sequence 0 "
         "(every journal event mapped once).",
         [{"task": body("pipe_gettask")}, {"recovery": body("state_full")}],
         context={"contextId": "ctx-pipe-1", "runId": "run-2"})
    case("live-resume-perm", "Real captures: a permission resume: the stale GetTask snapshot still shows "
         "the wait (reported), the answer is applied, then the answer stream.",
         [{"task": body("perm_gettask_a")}, {"markApplied": "permission-6fec5ec47c0b4643b8ef8c475ee659b1"}]
         + live_frames(fixtures, "perm2_a"),
         context={"contextId": "ctx-perm-a", "runId": "run-2"}, chain="live-perm1-a")
    live("live-subscribe-active", "Real capture: SubscribeToTask on a working task: snapshot first, then "
         "late text.", "subscribe_active")


# -------------------------------------------------------- synthetic cases

def synthetic_cases():
    # Text
    case("text-deltas-one-message", "Deltas with one message id stream into one text message.",
         START + [su("WORKING", "Hello ", iac=sess()), su("WORKING", "world", iac=sess())] + END)
    case("text-new-id-closes-previous", "A status message with a new id closes the previous message first.",
         START + [su("WORKING", "First.", mid="m-1", iac=sess()), su("WORKING", "Second.", mid="m-2", iac=sess())]
         + END)
    case("text-without-id-joins-current", "Status text without a message id joins the current message; "
         "with no current message it gets assistant-<hex>.",
         START + [su("WORKING", "Orphan ", mid=None, iac=sess()), su("WORKING", "text", mid=None, iac=sess()),
                  su("WORKING", " and more.", mid="m-9", iac=sess())] + END)
    case("text-assistant-final-skipped", "assistantFinal repeats streamed text: skipped.",
         START + [su("WORKING", "Hi.", iac=sess()),
                  su("WORKING", "Hi.", mid="task-1-2", iac=sess(assistantFinal={"complete": True}))] + END)
    case("text-assistant-final-alone", "With no streamed text, the assistantFinal text is the message.",
         START + [su("WORKING", "Buffered answer.", mid="task-1-2",
                     iac=sess(assistantFinal={"complete": True}))] + END)
    case("text-history-fallback", "A subscription snapshot without status text supplies the trailing agent "
         "messages of its history, once.",
         [task_frame("WORKING", iac=sess(), history=[hist("ROLE_USER", "q", "u-1"), hist("ROLE_AGENT", "Part one. ", "a-1"),
                                                    hist("ROLE_AGENT", "Part two.", "a-2")]),
          task_frame("WORKING", iac=sess(), history=[hist("ROLE_AGENT", "Not again.", "a-3")])] + END)
    case("text-snapshot-options", "A resume GetTask snapshot is mapped without status text and without "
         "Pipeline envelopes, but usage and ids still count.",
         [task_frame("INPUT_REQUIRED", key="task", iac=sess(usage={"provider": "p", "model": "m", "inputTokens": 1.0},
                                                              pipeline=env(5, "pipeline_started", {})))]
         + [{"task": {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_WORKING", "message": {
             "messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "hidden"}]}}}}] + END)
    case("text-user-role-ignored", "A status message with a user role is not agent text.",
         START + [su("WORKING", "echo", role="ROLE_USER", iac=sess())] + END)
    # Reasoning
    case("reasoning-then-text", "Reasoning (id from the run id) is closed before text starts.",
         START + [su("WORKING", iac=sess(thinking={"type": "raw_thinking", "text": "Hmm."})),
                  su("WORKING", iac=sess(thinking={"type": "raw_thinking", "text": " More."})),
                  su("WORKING", "Answer.", iac=sess())] + END)
    case("reasoning-inside-message", "Thinking while a text message is open is named after that message; "
         "text closes it again.",
         START + [su("WORKING", "Start. ", iac=sess()),
                  su("WORKING", iac=sess(thinking={"type": "raw_thinking", "text": "think"})),
                  su("WORKING", "Continue.", iac=sess())] + END)
    case("reasoning-ignored-shapes", "Thinking that is not raw_thinking, empty, or not an object is ignored.",
         START + [su("WORKING", iac=sess(thinking={"type": "summary", "text": "x"})),
                  su("WORKING", iac=sess(thinking={"type": "raw_thinking", "text": ""})),
                  su("WORKING", iac=sess(thinking="raw"))] + END)
    case("reasoning-open-at-end", "Reasoning still open at the end is closed before RUN_FINISHED.",
         START + [su("WORKING", iac=sess(thinking={"type": "raw_thinking", "text": "thinking to the end"}))] + END)
    # Tools
    case("tool-full-cycle", "started → START under the current text; input_complete → ARGS (sorted compact "
         "JSON) + END; completed → RESULT.",
         START + [su("WORKING", "Let me look. ", iac=sess()),
                  su("WORKING", iac=sess(tool={"status": "started", "toolUseId": "call_1", "name": "read_file"})),
                  su("WORKING", iac=sess(tool={"status": "input_delta", "toolUseId": "call_1", "partialJsonLength": 3.0})),
                  su("WORKING", iac=sess(tool={"status": "input_complete", "toolUseId": "call_1", "name": "read_file",
                                               "toolInput": {"path": "main.tf", "limit": 10.0, "a": "ü"}})),
                  su("WORKING", iac=sess(tool={"status": "completed", "toolUseId": "call_1", "name": "read_file",
                                               "result": "resource {}"}))] + END)
    case("tool-summary-and-json-result", "Without toolInput the args are {summary: inputSummary}; a JSON "
         "result is compact sorted JSON; failed maps like completed.",
         START + [su("WORKING", iac=sess(tool={"status": "input_complete", "toolUseId": "call_2", "name": "ros",
                                               "inputSummary": {"tool_name": "ros", "fields": {"b": 1, "a": 2}}})),
                  su("WORKING", iac=sess(tool={"status": "failed", "toolUseId": "call_2", "name": "ros",
                                               "result": {"z": [1, 2], "error": "denied"}}))] + END)
    case("tool-result-once", "A tool result is emitted once per id; a repeated start is not re-opened.",
         START + [su("WORKING", iac=sess(tool={"status": "started", "toolUseId": "call_3", "name": "t"})),
                  su("WORKING", iac=sess(tool={"status": "input_complete", "toolUseId": "call_3", "name": "t",
                                               "toolInput": {}})),
                  su("WORKING", iac=sess(tool={"status": "started", "toolUseId": "call_3", "name": "t"})),
                  su("WORKING", iac=sess(tool={"status": "input_complete", "toolUseId": "call_3", "name": "t",
                                               "toolInput": {"again": True}})),
                  su("WORKING", iac=sess(tool={"status": "completed", "toolUseId": "call_3", "result": "one"})),
                  su("WORKING", iac=sess(tool={"status": "completed", "toolUseId": "call_3", "result": "two"}))]
         + END)
    case("tool-progress", "MCP progress becomes iac-code.tool-progress.v1.",
         START + [su("WORKING", iac=sess(tool={"status": "progress", "toolUseId": "call_4", "name": "mcp",
                                               "mcp": {"serverName": "s", "toolName": "t", "progress": 1.0,
                                                       "total": 4.0, "message": "1/4"}}))] + END)
    case("tool-without-id", "A tool frame without toolUseId gets tool-<hex>; an unknown status is ignored.",
         START + [su("WORKING", iac=sess(tool={"status": "started", "name": "anon"})),
                  su("WORKING", iac=sess(tool={"status": "weird", "toolUseId": "call_5"}))] + END)
    case("tool-open-at-end", "A tool call still open at the end is closed (after reasoning, before text).",
         START + [su("WORKING", "Text. ", iac=sess()),
                  su("WORKING", iac=sess(tool={"status": "started", "toolUseId": "call_6", "name": "t"})),
                  su("WORKING", iac=sess(thinking={"type": "raw_thinking", "text": "r"}))] + END)
    case("tool-start-finalises-text", "A tool start finalises the text so far (digest kept), text after the "
         "tool continues the same message.",
         START + [su("WORKING", "Before. ", iac=sess()),
                  su("WORKING", iac=sess(tool={"status": "started", "toolUseId": "call_7", "name": "t"})),
                  su("WORKING", "After.", iac=sess())] + END)
    # Resume replay
    case("resume-replay-suffix", "A resumed agent resends its earlier text plus a suffix in one status "
         "message: only the suffix is shown.",
         [su("WORKING", "I will create a file. Done: created.", mid="task-1-message", iac=sess())] + END,
         context={"runId": "run-2"}, chain="live-perm1-a-like")
    case("resume-replay-nothing-new", "A resent text that is entirely known shows nothing; later deltas of "
         "the same message show normally.",
         [su("WORKING", "I will create a file. ", iac=sess()), su("WORKING", "New.", iac=sess())] + END,
         context={"runId": "run-2"}, chain="live-perm1-a-like")
    case("live-perm1-a-like", "Text, then a permission interrupt: the text digest is kept for resume replay.",
         START + [su("WORKING", "I will create a file. ", iac=sess()),
                  su("WORKING", iac=sess(tool={"status": "started", "toolUseId": "call_8", "name": "bash"})),
                  su("INPUT_REQUIRED", iac=sess(input=perm_input(tool="call_8")))])
    # Pipeline
    case("pipeline-step-cycle", "step_started / step_completed become STEP_STARTED / STEP_FINISHED named by "
         "the step id; pipeline_started is a CUSTOM event.",
         [task_frame(), pipe("WORKING", env(1, "pipeline_started", {"totalSteps": 2.0})),
          pipe("WORKING", env(2, "step_started", {"name": "intent"}, step="intent")),
          pipe("WORKING", env(3, "step_completed", {"durationS": 1.5}, step="intent")),
          pipe("COMPLETED", env(4, "pipeline_completed", {"totalSteps": 2.0}, scope="pipeline", status="completed"))])
    case("pipeline-duplicate-event-id", "A repeated eventId (even with a higher sequence) is dropped.",
         [task_frame(), pipe("WORKING", env(1, "step_started", step="a")),
          pipe("WORKING", env(2, "step_started", step="b", eid="evt-1")),
          pipe("WORKING", env(3, "step_completed", step="a"))] + END)
    case("pipeline-out-of-order", "Sequences 5, 7, 6, 8: 6 arrives late and is dropped; the cursor is 8.",
         [task_frame(), pipe("WORKING", env(5, "step_started", step="a")),
          pipe("WORKING", env(7, "diagram_shown", {"d": 1})),
          pipe("WORKING", env(6, "step_completed", step="a")),
          pipe("WORKING", env(8, "stack_progress", {"p": 2}))] + END)
    case("pipeline-batch", "A pipelineBatch is mapped in order before the single pipeline envelope; "
         "duplicates inside the batch are dropped.",
         [task_frame(), su("WORKING", iac={"pipelineBatch": {"events": [
             env(1, "step_started", step="a"), env(2, "text_delta", {"text": "hi"}, step="a"),
             env(2, "text_delta", {"text": "dup"}, step="a", eid="evt-2b"), env(3, "step_completed", step="a")]},
             "pipeline": env(4, "pipeline_warning", {"w": "x"}, scope="pipeline")})] + END)
    case("pipeline-parallel-candidates", "Two candidates run a step with the same id in parallel: distinct "
         "step names candidate:<id>:<step>, parallel text messages per candidate.",
         [task_frame(),
          pipe("WORKING", env(1, "step_started", step="evaluate")),
          pipe("WORKING", env(2, "candidate_started", {"subPipelineId": "sp1"}, scope="candidate", step="evaluate", candidate="sp1")),
          pipe("WORKING", env(3, "candidate_step_started", scope="candidate_step", step="evaluate", candidate="sp1", cstep="template")),
          pipe("WORKING", env(4, "candidate_step_started", scope="candidate_step", step="evaluate", candidate="sp2", cstep="template")),
          pipe("WORKING", env(5, "text_delta", {"text": "one "}, scope="candidate_step", step="evaluate", candidate="sp1", cstep="template")),
          pipe("WORKING", env(6, "text_delta", {"text": "two "}, scope="candidate_step", step="evaluate", candidate="sp2", cstep="template")),
          pipe("WORKING", env(7, "text_delta", {"text": "more"}, scope="candidate_step", step="evaluate", candidate="sp1", cstep="template")),
          pipe("WORKING", env(8, "candidate_step_completed", scope="candidate_step", step="evaluate", candidate="sp1", cstep="template")),
          pipe("WORKING", env(9, "candidate_step_failed", {"error": "x"}, scope="candidate_step", step="evaluate", candidate="sp2", cstep="template")),
          pipe("WORKING", env(10, "step_completed", step="evaluate"))] + END)
    case("pipeline-text-thinking-tools", "Pipeline thinking_delta, text_delta, tool_started and tool_result "
         "map to the standard events; usage is summed; message_started and context_usage are ignored.",
         [task_frame(), pipe("WORKING", env(1, "step_started", step="gen")),
          pipe("WORKING", env(2, "message_started", {"messageId": "x"}, step="gen")),
          pipe("WORKING", env(3, "thinking_delta", {"type": "raw_thinking", "text": "plan"}, step="gen")),
          pipe("WORKING", env(4, "text_delta", {"text": "Generating."}, step="gen")),
          pipe("WORKING", env(5, "tool_started", {"toolName": "ros_validate", "toolUseId": "call_p", "input": {"t": "x"}}, step="gen")),
          pipe("WORKING", env(6, "tool_result", {"toolName": "ros_validate", "toolUseId": "call_p", "isError": True, "result": {"ok": False}}, step="gen")),
          pipe("WORKING", env(7, "usage", {"provider": None, "model": None, "inputTokens": 3.0, "outputTokens": 4.0, "totalTokens": 7.0}, step="gen")),
          pipe("WORKING", env(8, "context_usage", {"totalTokens": 9.0}, step="gen"))] + END)
    case("pipeline-custom-allowlist", "Only allow-listed envelope types become iac-code.pipeline.v1; "
         "pipeline_handoff_ready, backup_committed and unknown types do not.",
         [task_frame()] + [pipe("WORKING", env(i + 1, t, {"i": i}, scope="pipeline")) for i, t in enumerate([
             "pipeline_resumed", "pipeline_error", "backup_blocked", "candidate_selected", "cleanup_progress",
             "rollback_triggered", "context_compacted", "mcp_status", "tool_progress", "fields_marked_stale",
             "pipeline_handoff_ready", "backup_committed", "permission_requested", "no_such_event"])] + END)
    case("pipeline-finish-unknown-step", "A finish for a step that was never started emits nothing.",
         [task_frame(), pipe("WORKING", env(1, "step_completed", step="ghost")),
          pipe("WORKING", env(2, "candidate_step_completed", step="x", candidate="sp9", cstep="ghost"))] + END)
    case("pipeline-reopen-durable-steps", "A later run of the execution re-opens the durable open steps "
         "(sorted by key) right after RUN_STARTED and closes them before the end; they stay durable.",
         [pipe("WORKING", env(12, "text_delta", {"text": "continuing"}, step="b"))] + END,
         durable={"pipelineSequence": 11, "pipelineOpenSteps": ["step:b", "candidate:sp1:t", "step:a"],
                  "textSnapshotDigests": []}, context={"runId": "run-2"})
    case("pipeline-zero-length-step", "Without re-opening, finishing a durable step emits a zero-length "
         "STARTED+FINISHED pair and removes it from the durable set.",
         [pipe("WORKING", env(12, "step_completed", step="a")),
          pipe("WORKING", env(13, "candidate_step_failed", step="x", candidate="sp1", cstep="t"))] + END,
         durable={"pipelineSequence": 11, "pipelineOpenSteps": ["step:a", "candidate:sp1:t"],
                  "textSnapshotDigests": []}, context={"runId": "run-2"}, reopenSteps=False)
    case("pipeline-stale-sequence", "Envelopes at or below the durable cursor are dropped on a later run.",
         [pipe("WORKING", env(10, "step_started", step="old")), pipe("WORKING", env(11, "step_started", step="old2")),
          pipe("WORKING", env(12, "step_started", step="new"))] + END,
         durable={"pipelineSequence": 11, "pipelineOpenSteps": [], "textSnapshotDigests": []}, context={"runId": "run-2"})
    case("pipeline-recovery", "Resume: GetTask snapshot (no envelopes, no text), then the recovery response: "
         "ACTIVITY_SNAPSHOT, then the journal events after the cursor (a seen event id is skipped).",
         [{"task": {"id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"},
                    "metadata": {"iac_code": {"iacCodeSessionId": S, "pipeline": env(9, "step_started", step="z")}}}},
          {"recovery": {"snapshot": {"pipelineRunId": "ctx-1", "status": "working", "lastSequence": 14,
                                     "steps": [{"id": "a", "status": "working"}]},
                        "events": [env(11, "step_completed", step="a"), env(12, "step_started", step="b"),
                                   {"eventType": "text_delta", "sequence": 13, "step": {"id": "b"}, "data": {"text": "caught up"}},
                                   env(12, "step_started", step="b"), "garbage"]}},
          pipe("WORKING", env(13, "step_completed", step="b")),
          pipe("WORKING", env(15, "step_completed", step="b"))] + END,
         durable={"pipelineSequence": 10, "pipelineOpenSteps": ["step:a"], "textSnapshotDigests": []},
         context={"runId": "run-2"})
    case("pipeline-recovery-no-snapshot", "A recovery body without a snapshot object maps to nothing.",
         [{"recovery": {"events": [env(20, "step_started", step="q")]}}, {"recovery": {"snapshot": "x"}}] + END,
         context={"runId": "run-2"})
    case("pipeline-session-in-envelopes", "Session ids inside envelopes (single and batch) are reported; "
         "two different ones are both reported for the machine to reject.",
         [task_frame(), pipe("WORKING", env(1, "pipeline_started", {}, session="sess-a", scope="pipeline")),
          su("WORKING", iac={"pipelineBatch": {"events": [env(2, "stack_progress", {}, session="sess-a"),
                                                          env(3, "stack_progress", {}, session="sess-b")]}})] + END)
    # Usage
    case("usage-several-models", "Usage is summed per (provider, model) in first-seen order; missing counts "
         "are 0; a record without provider/model is its own group.",
         START + [su("WORKING", iac=sess(usage={"provider": "dashscope", "model": "qwen-max", "inputTokens": 100.0,
                                                "outputTokens": 10.0, "totalTokens": 110.0, "cachedInputTokens": 50.0})),
                  su("WORKING", iac=sess(usage={"provider": "openai", "model": "gpt", "inputTokens": 7.0})),
                  su("WORKING", iac=sess(usage={"provider": "dashscope", "model": "qwen-max", "inputTokens": 1.0,
                                                "outputTokens": 2.0, "totalTokens": 3.0})),
                  su("WORKING", iac=sess(usage={"inputTokens": 5, "outputTokens": -3, "totalTokens": 1.5}))] + END)
    case("usage-on-run-error", "Usage recorded before a failure is reported on RUN_ERROR.",
         START + [su("WORKING", iac=sess(usage={"provider": "openai", "model": "other", "inputTokens": 0.0,
                                                "outputTokens": 0.0, "totalTokens": 0.0})),
                  su("FAILED", "Provider error.", iac=sess(error={"retryable": False}))])
    # Interrupts
    case("interrupt-question", "ask_user_question: options as selectedId branches plus free text, message "
         "with option lines, toolCallId from toolUseId, expiresAt from now + TTL.",
         START + [su("INPUT_REQUIRED", iac=sess(input={
             "schemaVersion": 1.0, "kind": "ask_user_question", "requestTaskId": "task-1", "contextId": "ctx-1",
             "inputId": "ask-call_9", "toolUseId": "call_9", "prompt": "Which region?", "allowFreeText": True,
             "freeTextPrompt": "Or type one", "required": True, "secretThing": "dropped",
             "options": [{"id": "cn-hangzhou", "label": "Hangzhou"}, {"id": "cn-beijing", "label": "Beijing"}]}))],
         context={"interruptTtlMs": 60000})
    case("interrupt-candidate-selection", "candidate_selection: ids from id / candidate_index / position, "
         "duplicate ids suffixed, titles from label / name; no free text.",
         START + [su("INPUT_REQUIRED", iac=sess(input={
             "schemaVersion": 1.0, "kind": "candidate_selection", "requestTaskId": "task-1", "contextId": "ctx-1",
             "inputId": "input-evt-3", "prompt": "Please choose a deployment plan", "required": True,
             "options": [{"id": "0", "label": "ECS + RDS", "totalMonthlyCost": "¥812/month"},
                         {"id": "0", "name": "ECS again"}, {"candidate_index": 2.0, "label": "SAE"},
                         {"summary": "no id, no label"}]}))])
    case("interrupt-defaults-translated", "No prompt and no options: the translated default text, the "
         "free-text branch only; a permission without prompt or title says 'Permission required'; "
         "a missing inputId is generated.",
         START + [su("INPUT_REQUIRED", iac=sess(
             input={"required": True, "requestTaskId": "task-1", "contextId": "ctx-1"},
             pendingPermissions=[perm_input("permission-x", prompt=None, title=None, options=None)]))],
         context={"language": "pt"})
    case("interrupt-sideband", "Sideband waits: candidate-scoped input and pendingPermissions entries; the "
         "same inputId twice is reported once; entries not required are ignored.",
         [task_frame(), su("WORKING", iac=sess(
             input=perm_input("permission-a", scope="candidate_step", subPipelineId="sp1"),
             pendingPermissions=[perm_input("permission-a"), perm_input("permission-b", tool="call_b"),
                                 perm_input("permission-c", required=False), "junk"]))])
    case("interrupt-cloud-resource-selection", "cloud_resource_selection is an input_required interrupt; "
         "its selector stays out of the public projection.",
         START + [su("INPUT_REQUIRED", iac=sess(input={
             "schemaVersion": 1.0, "kind": "cloud_resource_selection", "requestTaskId": "task-1", "contextId": "ctx-1",
             "inputId": "select-vpc-1", "toolUseId": "call_v", "prompt": "Choose a VPC", "required": True,
             "options": [{"id": "vpc-1", "label": "default (cn-hangzhou)"}],
             "selector": {"id": "sel-1", "associationProperty": "ALIYUN::ECS::VPC::VPCId"}},
             inputRequired={"selector": {"id": "sel-1"}}))])
    case("deployment-confirmation-no-input", "A Pipeline wait without an input projection (deployment "
         "confirmation) ends the turn with success.",
         [task_frame(), pipe("INPUT_REQUIRED", env(1, "input_required", {"kind": "deployment_confirmation"},
                                                  status="input_required", step="deploying"))])
    case("interrupt-own-expiry", "An input projection with its own expiresAt keeps it.",
         START + [su("INPUT_REQUIRED", iac=sess(input=perm_input(expiresAt="2030-01-01T00:00:00Z")))])
    case("interrupt-already-applied", "Inputs whose answer was applied are not reported; the turn ends "
         "with success.",
         START + [su("INPUT_REQUIRED", iac=sess(input=perm_input("permission-done")))],
         context={"appliedInputIds": ["permission-done"]})
    case("interrupt-mark-applied", "markApplied during the run suppresses that input.",
         START + [{"markApplied": "permission-late"}, su("INPUT_REQUIRED", iac=sess(input=perm_input("permission-late")))])
    case("interrupt-closes-everything", "An interrupt while reasoning, a tool, text and a step are open "
         "closes them in order reasoning, tools, text, steps.",
         [task_frame(), pipe("WORKING", env(1, "step_started", step="s")),
          su("WORKING", "Text. ", iac=sess()),
          su("WORKING", iac=sess(tool={"status": "started", "toolUseId": "call_o", "name": "t"})),
          su("WORKING", iac=sess(thinking={"type": "raw_thinking", "text": "r"})),
          su("INPUT_REQUIRED", iac=sess(input=perm_input(tool="call_o")))])
    case("interrupt-answered-tool", "A resumed run emits the answered question's tool result first; the "
         "runtime's own tool_result for that id is not repeated.",
         [{"answeredTool": {"toolCallId": "call_q", "text": "Beijing"}},
          pipe("WORKING", env(21, "input_received", {"selectedId": "cn-beijing"}, step="ask")),
          pipe("WORKING", env(22, "tool_result", {"toolUseId": "call_q", "result": "Beijing"}, step="ask")),
          pipe("WORKING", env(23, "step_completed", step="ask"))] + END,
         durable={"pipelineSequence": 20, "pipelineOpenSteps": ["step:ask"], "textSnapshotDigests": []},
         context={"runId": "run-2"})
    # Other frames and terminal states
    case("artifact-update", "An artifactUpdate becomes iac-code.artifact.v1 with schemaVersion 1.",
         START + [{"frame": {"artifactUpdate": {"taskId": "task-1", "contextId": "ctx-1", "lastChunk": True, "artifact": {
             "artifactId": "art-1", "name": "main.yaml", "parts": [{"url": "file:///w/main.yaml", "mediaType": "text/yaml"}],
             "metadata": {"byteSize": 812.0}}}}}] + END)
    case("message-frame-ack", "A message frame (sideband permission ack) maps to nothing but reports ids.",
         [{"frame": {"message": {"messageId": "permission-ack-1", "taskId": "task-1", "contextId": "ctx-1",
                                 "role": "ROLE_AGENT", "parts": [{"data": {"kind": "permission_ack", "accepted": True},
                                                                  "mediaType": "application/json"}]}}}] + END,
         context={"runId": "run-2"})
    case("failed-then-more-frames", "Reading stops at FAILED; text and usage after it are ignored.",
         START + [su("FAILED", "Boom.", iac=sess()), su("WORKING", "ignored", iac=sess(usage={"inputTokens": 1.0}))])
    case("canceled", "CANCELED ends with RUN_ERROR CANCELLED after its text.",
         START + [su("WORKING", "Working...", iac=sess()), su("CANCELED", "Task canceled.", mid="task-1-5", iac=sess())])
    case("rejected-and-auth", "REJECTED is a failure like FAILED.",
         START + [su("REJECTED", iac=sess())])
    case("stream-ends-working", "A stream that ends while WORKING fails with A2A_EXECUTION_FAILED.",
         START + [su("WORKING", "partial", iac=sess())])
    case("completed-state", "COMPLETED ends with success (pipeline mode).",
         [task_frame(), su("COMPLETED", iac=sess())])
    case("session-event-late", "Without a session id the session event is emitted just before the end "
         "with sessionId null.",
         [task_frame(), su("WORKING", "no session"), su("INPUT_REQUIRED")])
    case("garbage-metadata", "Odd metadata shapes are ignored without failing the frame.",
         [task_frame(), su("WORKING", iac="not an object"),
          su("WORKING", iac={"tool": "started", "thinking": [1], "usage": 5, "pipeline": [], "pipelineBatch": {"events": "x"},
                             "input": {"required": "true"}, "pendingPermissions": {"a": 1}, "assistantFinal": True}),
          su("WORKING", iac={"pipeline": {"eventType": 5, "sequence": "7", "step": {"id": 3}, "data": []}}),
          su("WORKING", iac={"pipeline": {"eventType": "step_started", "sequence": 1e30, "step": {"id": "big"}}}),
          su("WORKING", iac={"pipeline": {"eventType": "text_delta", "sequence": -1.0, "data": {"text": ""}}})] + END)
    case("step-name-collision", "A plain step whose id looks like a candidate key cannot open a second "
         "span with an already open name.",
         [task_frame(), pipe("WORKING", env(1, "candidate_step_started", step="e", candidate="sp1", cstep="t")),
          pipe("WORKING", env(2, "step_started", step="candidate:sp1:t")),
          pipe("WORKING", env(3, "step_completed", step="candidate:sp1:t"))] + END)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixtures", required=True, help="directory holding the out_<name>.json captures")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    synthetic_cases()
    live_cases(args.fixtures)
    for name, value in CASES.items():
        path = os.path.join(OUT, name + ".json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
            if "expected" in old:
                value["expected"] = old["expected"]
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    print("%d mapper cases in %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
