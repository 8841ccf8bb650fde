#!/usr/bin/env python3
"""Differential check of the mapper golden corpus against the Python reference.

Feeds every `mapper/*.json` case input to the reference mapper of iac-code
0.16.0 (`iac_code.agui.events.A2AEventMapper`, driven the way
`core/src/replay/mapper.rs` drives the Rust mapper) and compares the mapped
events (RUN_* and the session event, which the machine owns, left out), the
text snapshot digests and the interrupts with the case's `expected`.

Run it with the interop venv, which has the reference installed:

    bash .ci/interop-setup.sh
    target/interop-venv/bin/python tests/golden/crosscheck_mapper_reference.py

Exits non-zero when a case differs for a reason not listed in DEVIATIONS
(each one a deliberate choice of this implementation, with the reason).
"""

import glob
import json
import os
import sys

from iac_code.agui.events import A2AEventMapper, a2a_inputs, a2a_state, interrupt_from_a2a

HERE = os.path.dirname(os.path.abspath(__file__))

DEVIATIONS = {
    "pipeline-stale-sequence": "the live dedupe cursor starts at the durable pipelineSequence "
                               "(the reference starts every run at 0)",
    "step-name-collision": "a step name already open is never started again (the reference would "
                           "emit an invalid second STEP_STARTED)",
    "tool-result-once": "TOOL_CALL_START once per tool id and run (the reference re-opens a closed id)",
    "text-without-id-joins-current": "fresh ids come from the seeded generator",
    "tool-without-id": "fresh ids come from the seeded generator",
    "usage-several-models": "negative or fractional counts count as 0 (the reference raises)",
    "interrupt-candidate-selection": "an integral float candidate_index gives the id '2', not '2.0'",
    "interrupt-defaults-translated": "default texts in the run's language; a generated inputId is kept "
                                     "in the projection",
}

TERMINAL = {"failed", "rejected", "auth-required", "canceled", "completed", "input-required"}


def dump(event):
    value = event.model_dump(by_alias=True, exclude_none=True)
    value.pop("timestamp", None)
    value["type"] = getattr(value["type"], "value", value["type"])
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def reference_run(case):
    inp = case["input"]
    ctx = inp["context"]
    durable = inp.get("durable") or {}
    mapper = A2AEventMapper(thread_id=ctx["threadId"], run_id=ctx["runId"],
                            open_pipeline_steps=set(durable.get("pipelineOpenSteps", [])),
                            text_snapshot_digests=set(durable.get("textSnapshotDigests", [])))
    # Pipeline text ids: both name the Pipeline run by the A2A context id.
    mapper.pipeline_run_id = ctx.get("contextId")
    applied = set(ctx.get("appliedInputIds", []))
    events = mapper.reopen_pipeline_steps() if inp.get("reopenSteps", True) else []
    inputs = []
    for step in inp["steps"]:
        if "frame" in step:
            frame = {"result": step["frame"].get("result", step["frame"])}
            events += mapper.map(frame)
            inputs = [v for v in a2a_inputs(frame) if str(v.get("inputId") or "") not in applied]
            if inputs or a2a_state(frame) in TERMINAL:
                break
        elif "task" in step:
            events += mapper.map(step["task"], include_pipeline=False, include_status_text=False)
        elif "recovery" in step and isinstance(step["recovery"], dict):
            events += mapper.map_pipeline_recovery(step["recovery"])
        elif "answeredTool" in step:
            answer = step["answeredTool"]
            events += mapper.map_resolved_tool(tool_call_id=answer["toolCallId"], content=answer["text"])
        elif "markApplied" in step:
            applied.add(step["markApplied"])
    if inputs:
        mapper.finalize_text_snapshots()
    events += mapper.close_all()
    interrupts = [interrupt_from_a2a(v).model_dump(by_alias=True, exclude_none=True) for v in inputs]
    return [dump(e) for e in events], sorted(mapper.text_snapshot_digests), interrupts


def ours(case):
    expected = case["expected"]
    events = []
    for event in expected["events"]:
        if event["type"] in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR"):
            continue
        if event["type"] == "CUSTOM" and event["name"] == "iac-code.session.v1":
            continue
        event = dict(event)
        event.pop("timestamp", None)
        events.append(json.dumps(event, sort_keys=True, ensure_ascii=False))
    outcome = expected["events"][-1].get("outcome") or {}
    return events, expected["durable"]["textSnapshotDigests"], outcome.get("interrupts", [])


def comparable(interrupt):
    value = dict(interrupt)
    value.pop("expiresAt", None)
    metadata = dict(value.pop("metadata", {}))
    metadata.pop("expiresAt", None)
    return value, {k: v for k, v in metadata.items() if k != "schemaVersion"}


def main():
    unexpected = 0
    for path in sorted(glob.glob(os.path.join(HERE, "mapper", "*.json"))):
        name = os.path.basename(path)[:-5]
        with open(path, encoding="utf-8") as f:
            case = json.load(f)
        try:
            reference = reference_run(case)
        except Exception as error:  # the reference refuses some garbage the Rust mapper tolerates
            reference = ("raised %r" % error,)
        mine = ours(case)
        same = (len(reference) == 3 and reference[0] == mine[0] and reference[1] == mine[1]
                and len(reference[2]) == len(mine[2])
                and all(comparable(a)[0] == comparable(b)[0] and
                        all(comparable(a)[1].get(k) == v for k, v in comparable(b)[1].items()
                            if k in comparable(a)[1])
                        for a, b in zip(reference[2], mine[2])))
        if same:
            print("same      %s" % name)
        elif name in DEVIATIONS:
            print("deviation %s: %s" % (name, DEVIATIONS[name]))
        else:
            unexpected += 1
            print("DIFFERS   %s" % name)
    print("%d unexpected difference(s)" % unexpected)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
