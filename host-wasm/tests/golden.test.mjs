// Golden parity: every tests/golden/**/*.json case replayed by the wasm build
// under Node must give, byte for byte, the canonical JSON of its `expected`
// (which the native runner checks the native core against).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const wasm = require("../pkg/node/iac_agui_wasm.js");
const root = fileURLToPath(new URL("../../tests/golden/", import.meta.url));

function collect(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) collect(path, out);
    else if (entry.name.endsWith(".json")) out.push(path);
  }
  return out.sort();
}

/** A readable line diff of two canonical JSON texts (display only). */
function diff(expected, actual) {
  const pretty = (t) => JSON.stringify(JSON.parse(t), null, 2).split("\n");
  const [a, b] = [pretty(expected), pretty(actual)];
  const lines = [];
  for (let i = 0; i < Math.max(a.length, b.length) && lines.length < 40; i++) {
    if (a[i] !== b[i]) {
      if (a[i] !== undefined) lines.push(`- ${a[i]}`);
      if (b[i] !== undefined) lines.push(`+ ${b[i]}`);
    }
  }
  return lines.join("\n");
}

test("wasm replay matches every golden case byte for byte", () => {
  const cases = collect(root);
  assert.ok(cases.length > 0, `no golden cases under ${root}`);
  const failures = [];
  for (const path of cases) {
    const name = relative(root, path);
    try {
      const c = wasm.goldenCase(readFileSync(path, "utf8"));
      if (c.expected === null) {
        failures.push(`${name}: no expected output`);
        continue;
      }
      const actual = wasm.replay(c.kind, c.input);
      if (actual !== c.expected) failures.push(`${name}:\n${diff(c.expected, actual)}`);
    } catch (e) {
      failures.push(`${name}: ${e.message}`);
    }
  }
  console.log(`${cases.length} golden cases under wasm, ${failures.length} failed`);
  assert.equal(failures.length, 0, failures.join("\n\n"));
});

test("golden mapper streams pass the wasm stream checker as SSE", () => {
  // The mapper cases are whole AG-UI streams: framed as the server frames
  // them, they must pass the checker with no violation.
  let checked = 0;
  for (const path of collect(join(root, "mapper"))) {
    const c = wasm.goldenCase(readFileSync(path, "utf8"));
    const events = c.expected === null ? null : JSON.parse(c.expected).events;
    if (!Array.isArray(events)) continue;
    const sse = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
    const { threadId, runId } = JSON.parse(c.input).context ?? {};
    const checker = new wasm.EventStreamChecker({ threadId, runId });
    const bytes = new TextEncoder().encode(sse);
    let seen = 0;
    for (let i = 0; i < bytes.length; i += 97) {
      const out = checker.push(bytes.subarray(i, i + 97));
      assert.equal(out.violation, null, `${relative(root, path)}: ${JSON.stringify(out.violation)}`);
      seen += out.events.length;
    }
    assert.equal(seen, events.length);
    assert.equal(checker.finish().violation, null, relative(root, path));
    assert.equal(wasm.checkEvents(JSON.stringify(events), { threadId, runId }), null);
    checked++;
  }
  assert.ok(checked > 0, "no mapper streams to check");
});
