"""Unit tests for the scripted LLM (stdlib unittest; no venv, no runtime needed).

Run: ``python3 -m unittest discover -s tests/interop -p 'test_*.py'``.
"""

from __future__ import annotations

import json
import sys
import unittest
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_llm  # noqa: E402

NORMAL_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in ("glob", "bash", "read_file")]
PIPE_TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {}}}
    for n in ("read_memory", "ask_user_question", "complete_step")
]


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def with_call(name: str, call_id: str, result: str) -> list[dict]:
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


class PlanTests(unittest.TestCase):
    def plan(self, messages: list[dict], tools: list[dict] = NORMAL_TOOLS) -> dict:
        return fake_llm.plan_reply({"messages": [{"role": "system", "content": "sys"}, *messages], "tools": tools})

    def test_plain_is_the_default(self) -> None:
        reply = self.plan([user("hello")])
        self.assertEqual("".join(reply["text"]), "Hello! How can I help?")
        self.assertIsNone(reply["tool"])

    def test_keyword_in_a_list_content_and_latest_user_message_wins(self) -> None:
        msgs = [
            user("SCENARIO_TOOL"),
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "<reminder/> SCENARIO_THINK now"}]},
        ]
        reply = self.plan(msgs)
        self.assertEqual(reply["reasoning"], ["Let me think about this. ", "A short greeting fits."])

    def test_read_only_tool_then_answer_quotes_result(self) -> None:
        first = self.plan([user("SCENARIO_TOOL")])
        self.assertEqual(first["tool"], {"name": "glob", "arguments": {"pattern": "*.md"}})
        second = self.plan([user("SCENARIO_TOOL"), *with_call("glob", "call_1", "a.md\nb.md")])
        self.assertEqual("".join(second["text"]), "Tool glob finished: a.md")
        self.assertIsNone(second["tool"])

    def test_permission_command_uses_the_requested_file_name(self) -> None:
        reply = self.plan([user("SCENARIO_PERM file=out-1.txt")])
        self.assertEqual(reply["tool"]["name"], "bash")
        self.assertEqual(reply["tool"]["arguments"]["command"], "printf written-by-interop > out-1.txt")
        unsafe = self.plan([user("SCENARIO_PERM file=;rm")])
        self.assertIn(f"> {fake_llm.DEFAULT_PERM_FILE}", unsafe["tool"]["arguments"]["command"])

    def test_slow_and_fail(self) -> None:
        slow = self.plan([user("SCENARIO_SLOW delay=0.25")])
        self.assertEqual(slow["delay"], 0.25)
        self.assertEqual(len(slow["text"]), 40)
        self.assertTrue(self.plan([user("SCENARIO_FAIL")])["error"])

    def test_auxiliary_call_without_tools_gets_plain_text(self) -> None:
        reply = fake_llm.plan_reply({"messages": [user("SCENARIO_PERM title please")]})
        self.assertIsNone(reply["tool"])
        self.assertTrue(reply["text"])

    def test_pipeline_asks_once_then_completes_with_the_answer(self) -> None:
        first = self.plan([user("I need a website")], PIPE_TOOLS)
        self.assertEqual(first["tool"]["name"], "ask_user_question")
        self.assertEqual(first["reasoning"], ["Need clarification."])
        self.assertEqual([o["id"] for o in first["tool"]["arguments"]["options"]], ["cn-hangzhou", "cn-beijing"])
        answer = json.dumps({"selected_id": "cn-beijing", "selected_label": "Beijing", "free_text": ""})
        second = self.plan([user("I need a website"), *with_call("ask_user_question", "c1", answer)], PIPE_TOOLS)
        self.assertEqual(second["tool"]["name"], "complete_step")
        conclusion = second["tool"]["arguments"]["conclusion"]
        self.assertIs(conclusion["is_infra_intent"], False)
        self.assertEqual(conclusion["clarification_choice"], "cn-beijing")
        self.assertNotIn("clarification_text", conclusion)

    def test_pipeline_free_text_and_no_loop_after_complete_step(self) -> None:
        answer = json.dumps({"selected_id": "", "selected_label": "", "free_text": "Shanghai"})
        msgs = [user("x"), *with_call("ask_user_question", "c1", answer)]
        second = self.plan(msgs, PIPE_TOOLS)
        self.assertEqual(second["tool"]["arguments"]["conclusion"]["clarification_text"], "Shanghai")
        third = self.plan([*msgs, *with_call("complete_step", "c2", "rejected")], PIPE_TOOLS)
        self.assertIsNone(third["tool"])


class StreamTests(unittest.TestCase):
    def test_tool_call_chunks_reassemble_to_the_arguments(self) -> None:
        reply = {
            "reasoning": ["r"],
            "text": ["t"],
            "tool": {"name": "glob", "arguments": {"pattern": "*.md"}},
            "delay": 0.0,
            "error": None,
        }
        chunks = fake_llm.stream_chunks(reply, "call_abc")
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        self.assertEqual(deltas[1], {"reasoning_content": "r"})
        self.assertEqual(deltas[2], {"content": "t"})
        calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
        self.assertEqual(calls[0]["id"], "call_abc")
        args = "".join(c["function"]["arguments"] for c in calls)
        self.assertEqual(json.loads(args), {"pattern": "*.md"})
        self.assertEqual(chunks[-2]["choices"][0]["finish_reason"], "tool_calls")
        self.assertEqual(chunks[-1]["choices"], [])
        self.assertEqual(chunks[-1]["usage"]["prompt_tokens"], 120)


class ServerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = fake_llm.start_server()
        cls.base = f"http://127.0.0.1:{cls.server.server_address[1]}/v1"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()

    def post(self, body: dict) -> tuple[int, bytes]:
        req = urllib.request.Request(
            f"{self.base}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def test_models(self) -> None:
        with urllib.request.urlopen(f"{self.base}/models", timeout=10) as resp:
            self.assertEqual(json.load(resp)["data"][0]["id"], fake_llm.MODEL_ID)

    def test_streaming_answer_is_sse_ending_in_done(self) -> None:
        status, raw = self.post({"model": "fake", "stream": True, "messages": [user("hi")], "tools": NORMAL_TOOLS})
        self.assertEqual(status, 200)
        lines = [ln for ln in raw.decode().split("\n\n") if ln]
        self.assertEqual(lines[-1], "data: [DONE]")
        text = "".join(
            json.loads(ln[6:])["choices"][0]["delta"].get("content", "")
            for ln in lines[:-1]
            if json.loads(ln[6:])["choices"]
        )
        self.assertEqual(text, "Hello! How can I help?")

    def test_same_conversation_same_call_id(self) -> None:
        body = {"model": "fake", "stream": False, "messages": [user("SCENARIO_TOOL")], "tools": NORMAL_TOOLS}
        first = json.loads(self.post(body)[1])["choices"][0]["message"]["tool_calls"][0]["id"]
        second = json.loads(self.post(body)[1])["choices"][0]["message"]["tool_calls"][0]["id"]
        self.assertEqual(first, second)
        other = dict(body, messages=[user("SCENARIO_TOOL again")])
        self.assertNotEqual(first, json.loads(self.post(other)[1])["choices"][0]["message"]["tool_calls"][0]["id"])

    def test_fail_scenario_is_http_400(self) -> None:
        status, raw = self.post(
            {"model": "fake", "stream": True, "messages": [user("SCENARIO_FAIL")], "tools": NORMAL_TOOLS}
        )
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(raw)["error"]["code"], "scripted_failure")


if __name__ == "__main__":
    unittest.main()
