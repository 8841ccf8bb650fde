// validateResume under Node, against the real interrupts of the golden
// corpus (built by the core's mapper exactly as the server sends them): every
// answer their responseSchema allows must pass, every other must be refused
// with the server's code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const wasm = require("../pkg/node/iac_agui_wasm.js");
const mapperDir = fileURLToPath(new URL("../../tests/golden/mapper/", import.meta.url));

/** Every interrupt outcome of the mapper goldens: [file, interrupts]. */
function goldenInterrupts() {
  const found = [];
  for (const name of readdirSync(mapperDir).filter((n) => n.endsWith(".json")).sort()) {
    const c = JSON.parse(readFileSync(join(mapperDir, name), "utf8"));
    for (const e of c.expected?.events ?? []) {
      if (e.type === "RUN_FINISHED" && e.outcome?.type === "interrupt") {
        found.push([name, e.outcome.interrupts]);
      }
    }
  }
  return found;
}

const judge = (entries, interrupts, options) =>
  wasm.validateResume(JSON.stringify(entries), JSON.stringify(interrupts), options);

/** A complete, valid answer for one interrupt, from its schema. */
function validAnswer(interrupt) {
  if (interrupt.reason === "tool_call") return wasm.permissionAnswer(interrupt.id, "deny");
  const branch = interrupt.responseSchema.oneOf[0];
  return "selectedId" in branch.properties
    ? wasm.selectionAnswer(interrupt.id, branch.properties.selectedId.const)
    : wasm.freeTextAnswer(interrupt.id, "an answer");
}

test("answers allowed by each golden interrupt's schema pass; others are refused", () => {
  const cases = goldenInterrupts();
  assert.ok(cases.length >= 5, "too few interrupt goldens");
  for (const [file, interrupts] of cases) {
    const others = interrupts.map(validAnswer);
    for (const [i, interrupt] of interrupts.entries()) {
      const withAnswer = (answer) => others.map((a, j) => (j === i ? answer : a));
      const ok = (answer) => {
        const v = judge(withAnswer(answer), interrupts);
        assert.equal(v.ok, true, `${file} ${interrupt.id}: ${JSON.stringify(answer)} → ${JSON.stringify(v)}`);
      };
      const refused = (answer, code = "RESUME_PAYLOAD_INVALID") => {
        const v = judge(withAnswer(answer), interrupts);
        assert.equal(v.error?.code, code, `${file} ${interrupt.id}: ${JSON.stringify(answer)} → ${JSON.stringify(v)}`);
        assert.equal(v.entries[i].error?.code, code);
      };
      if (interrupt.reason === "tool_call") {
        ok(wasm.permissionAnswer(interrupt.id, "allow_once"));
        ok(wasm.permissionAnswer(interrupt.id, "deny"));
        ok(wasm.cancelAnswer(interrupt.id));
        refused({ interruptId: interrupt.id, status: "resolved", payload: { decision: "always" } });
        refused({ interruptId: interrupt.id, status: "resolved", payload: { decision: "deny", extra: 1 } });
        refused({ interruptId: interrupt.id, status: "resolved" });
        continue;
      }
      const branches = interrupt.responseSchema.oneOf;
      const ids = branches.filter((b) => "selectedId" in b.properties).map((b) => b.properties.selectedId.const);
      const freeText = branches.some((b) => "freeText" in b.properties);
      for (const id of ids) ok(wasm.selectionAnswer(interrupt.id, id));
      refused(wasm.selectionAnswer(interrupt.id, "no-such-option"));
      refused(wasm.freeTextAnswer(interrupt.id, ""));
      if (freeText) ok(wasm.freeTextAnswer(interrupt.id, "something else"));
      else refused(wasm.freeTextAnswer(interrupt.id, "something else"));
      ok(wasm.cancelAnswer(interrupt.id));
    }
  }
});

test("missing, duplicate and unknown entries are judged as the server does", () => {
  const [, interrupts] = goldenInterrupts().find(([, list]) => list.length >= 2);
  const answers = interrupts.map(validAnswer);
  const missing = judge(answers.slice(1), interrupts, { preferredLanguage: "pt" });
  assert.equal(missing.error.code, "INCOMPLETE_RESUME");
  assert.deepEqual(missing.missing, [interrupts[0].id]);
  assert.notEqual(missing.error.message, judge(answers.slice(1), interrupts).error.message);
  const duplicate = judge([...answers, answers[0]], interrupts);
  assert.equal(duplicate.error.code, "INCOMPLETE_RESUME");
  assert.equal(duplicate.entries.at(-1).error.code, "INCOMPLETE_RESUME");
  const unknown = judge([...answers, wasm.cancelAnswer("not-pending")], interrupts);
  assert.equal(unknown.error.code, "UNKNOWN_INTERRUPT");
  assert.equal(unknown.entries.at(-1).error.code, "UNKNOWN_INTERRUPT");
  assert.equal(unknown.entries[0].ok, true);
});

test("expiry, a whole request body, and input that is not JSON", () => {
  const [, interrupts] = goldenInterrupts()[0];
  const answers = interrupts.map(validAnswer);
  const at = Date.parse(interrupts[0].expiresAt);
  assert.equal(judge(answers, interrupts, { nowMs: at - 1 }).ok, true);
  assert.equal(judge(answers, interrupts, { nowMs: at }).error.code, "EXECUTION_EXPIRED");
  const body = { threadId: "t", runId: "r", resume: answers };
  assert.equal(judge(body, interrupts).ok, true);
  assert.throws(() => wasm.validateResume("[", "[]"), { name: "IacAguiError", code: "INVALID_JSON" });
});
