#!/usr/bin/env python3
"""Prints a thread state document written by the Python reference adapter
(iac-code 0.16.0) itself, for the `resume/python-written-thread` case.

Run it with a Python that has `iac-code==0.16.0` installed (for example the
interop venv: `target/interop-venv/bin/python`). It builds the adapter's own
`ThreadBinding` with a pending permission and a pending sideband permission,
serialises it with `AguiA2AAdapter._thread_state_document` and writes it with
`FileAguiThreadStateStore.save_thread` (the same atomic, 0600 file the
`iac-code agui` server writes), then prints the file's JSON. gen_cases.py
embeds the printed document as `REFERENCE_WRITTEN`.
"""

import json
import tempfile

from iac_code.agui.adapter import AguiA2AAdapter, PendingInput, ThreadBinding, _context_id, _persistent_input
from iac_code.agui.events import _text_digest, interrupt_from_a2a
from iac_code.agui.inputs import canonical_digest
from iac_code.agui.state import FileAguiThreadStateStore

THREAD = "thread-1"
TASK = "task-1"


def pending(value, sideband):
    safe = _persistent_input(value)
    return PendingInput(value=safe, interrupt=interrupt_from_a2a(safe), sideband=sideband)


def main():
    ctx = _context_id(THREAD)
    permission = {
        "schemaVersion": 1.0, "kind": "permission", "requestTaskId": TASK, "contextId": ctx,
        "inputId": "permission-aaaa", "toolUseId": "call_1", "toolName": "bash",
        "title": "Run a local shell command", "prompt": "Run a local shell command Allow once?",
        "options": [{"id": "allow_once", "label": "Allow once"}, {"id": "deny", "label": "Deny"}],
        "language": "en", "required": True,
        # Not public: the reference drops it before storing.
        "toolInput": {"command": "echo secret"},
    }
    sideband = dict(permission, inputId="permission-s1", toolUseId="call_s1", scope="candidate", subPipelineId="sp1")
    binding = ThreadBinding(
        thread_id=THREAD, context_id=ctx, cwd="/work/ws", user_id="u1", ros_invocation_id="ros-1",
        iac_code_session_id="session-1", execution_id="0b6f9a52-93a4-4d0e-9a57-2c7e6c1f0a11", task_id=TASK,
        pending={"permission-aaaa": pending(permission, False), "permission-s1": pending(sideband, True)},
        pipeline_sequence=7, pipeline_open_steps={"step:evaluate_candidates"},
        text_snapshot_digests={_text_digest("Let me check.")},
        run_digests={"run-1": canonical_digest({"run": 1})},
        applied_resume_digests={("5d7b0c1e-0000-4000-8000-000000000001", "permission-old"):
                                canonical_digest({"status": "resolved", "payload": {"decision": "deny"}})},
        terminal_execution_ids={"5d7b0c1e-0000-4000-8000-000000000001"},
    )
    adapter = AguiA2AAdapter.__new__(AguiA2AAdapter)
    with tempfile.TemporaryDirectory() as root:
        store = FileAguiThreadStateStore(root)
        store.save_thread(THREAD, adapter._thread_state_document(binding))
        with open(store.path_for_thread(THREAD), encoding="utf-8") as f:
            document = json.load(f)
    print(json.dumps(document, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
