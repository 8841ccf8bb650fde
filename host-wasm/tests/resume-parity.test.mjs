// validateResume against the thread machine itself: in every machine golden
// (tests/golden/machine/**), each resume request is judged in the page from
// the interrupts the server last sent, and the verdict must match what the
// machine did with it — the same entry-check code, or acceptance.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const wasm = require("../pkg/node/iac_agui_wasm.js");
const root = fileURLToPath(new URL("../../tests/golden/machine/", import.meta.url));

// Codes of SPEC §8 step 6, decided from the request and the interrupts alone.
const ENTRY_CODES = new Set(["INCOMPLETE_RESUME", "UNKNOWN_INTERRUPT", "RESUME_PAYLOAD_INVALID"]);
// Decided from server state the page never sees (applied answers, expiry by
// the server's clock, reconciliation with the A2A task, session and task
// recovery); the page's verdict on such resumes is not compared.
const SERVER_STATE_CODES = new Set([
  "RESUME_ALREADY_APPLIED",
  "EXECUTION_EXPIRED",
  "EXECUTION_LOST",
  "SESSION_BACKUP_NOT_READY",
  "A2A_PROTOCOL_ERROR",
  "STATE_PERSISTENCE_FAILED",
  "A2A_UNAVAILABLE",
  "RESUME_REQUIRED",
  "THREAD_BUSY",
  "STATE_UNAVAILABLE",
  "RUN_ID_CONFLICT",
  "DUPLICATE_RUN_ID",
  "THREAD_BINDING_CONFLICT",
  "INVALID_INPUT",
]);

function collect(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) collect(path, out);
    else if (entry.name.endsWith(".json")) out.push(path);
  }
  return out.sort();
}

/** Every output of a machine case, flattened in order, with the index of
 * the input step that produced it. */
function outputs(c) {
  return (c.expected?.steps ?? []).flatMap((s, step) => (s.outputs ?? []).map((o) => ({ ...o, step })));
}

/** The resumes of a case: [{entries, interrupts, code|null, runId}], with
 * the interrupts of the last interrupt outcome emitted before the resume. */
function resumes(c) {
  const outs = outputs(c);
  const found = [];
  let interrupts = [];
  for (const [step, input] of (c.input.steps ?? []).entries()) {
    for (const o of outs.filter((x) => x.step === step - 1)) {
      const e = o.type === "emit" ? o.event : null;
      if (e?.type === "RUN_FINISHED" && e.outcome?.type === "interrupt") interrupts = e.outcome.interrupts;
    }
    const run = input.run;
    if (!run?.resume) continue;
    const own = outs.filter((o) => o.runId === run.runId);
    const error = own.find((o) => o.event?.type === "RUN_ERROR")?.event;
    const refusal = own.find((o) => o.type === "refused");
    const code = error?.code ?? refusal?.body?.error?.code ?? null;
    found.push({ entries: run.resume, interrupts, code, runId: run.runId });
  }
  return found;
}

test("validateResume agrees with the machine on every golden resume", () => {
  let compared = 0;
  const byCode = {};
  const failures = [];
  for (const path of collect(root)) {
    const c = JSON.parse(readFileSync(path, "utf8"));
    if (c.kind !== "machine") continue;
    for (const r of resumes(c)) {
      if (r.interrupts.length === 0 || SERVER_STATE_CODES.has(r.code)) continue;
      const verdict = wasm.validateResume(JSON.stringify(r.entries), JSON.stringify(r.interrupts));
      const want = ENTRY_CODES.has(r.code) ? r.code : null;
      const got = verdict.ok ? null : verdict.error.code;
      compared++;
      byCode[want ?? "accepted"] = (byCode[want ?? "accepted"] ?? 0) + 1;
      if (got !== want) {
        failures.push(`${relative(root, path)} ${r.runId}: machine ${r.code ?? "accepted"}, page ${got ?? "accepted"}`);
      }
    }
  }
  console.log(`${compared} golden resumes compared with the machine (${JSON.stringify(byCode)}), ${failures.length} differ`);
  assert.ok(compared >= 5, `only ${compared} resumes compared`);
  assert.ok(Object.keys(byCode).length >= 3, "the corpus no longer covers refusals and acceptances");
  assert.deepEqual(failures, []);
});
