// Every export of the wasm build, under Node, through the wasm-bindgen JS
// API. Build first: `bash .ci/wasm.sh --build-only`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const wasm = require("../pkg/node/iac_agui_wasm.js");
const vectors = JSON.parse(
  readFileSync(new URL("./vectors/run-input.json", import.meta.url), "utf8"),
);

const iacCode = { schemaVersion: 1, rosInvocationId: "inv-1", cwd: "/workspace/s1" };
const runBody = (extra = {}) => ({
  threadId: "t-1",
  runId: "r-1",
  state: {},
  messages: [{ id: "m1", role: "user", content: "hello" }],
  tools: [],
  context: [],
  forwardedProps: { iacCode },
  ...extra,
});

test("validateRunInput gives the native verdict for every vector", () => {
  assert.ok(vectors.cases.length > 20);
  for (const c of vectors.cases) {
    const body = c.raw ?? JSON.stringify(c.body);
    const verdict = wasm.validateRunInput(body, c.options);
    for (const [key, want] of Object.entries(c.expect)) {
      const got = key === "code" || key === "message" ? verdict.error?.[key] : verdict[key];
      assert.deepEqual(got, want, `${c.name}: ${key} (verdict ${JSON.stringify(verdict)})`);
    }
  }
});

test("validateRunInput: accepted verdict carries the canonical digest", () => {
  const body = JSON.stringify(runBody());
  const verdict = wasm.validateRunInput(body);
  assert.equal(verdict.ok, true);
  assert.equal(verdict.threadId, "t-1");
  assert.equal(verdict.digest, wasm.canonicalDigest(body));
  assert.deepEqual(verdict.serverChecks, ["workspace"]);
});

test("validateRunInput: refusals carry {code, message, details} and the HTTP status", () => {
  const verdict = wasm.validateRunInput(JSON.stringify(runBody({ tools: [{ name: "x" }] })), {
    acceptLanguage: "ja",
  });
  assert.equal(verdict.ok, false);
  assert.equal(verdict.status, 400);
  assert.equal(verdict.language, "ja");
  assert.deepEqual(Object.keys(verdict.error).sort(), ["code", "details", "message"]);
  assert.equal(verdict.error.code, "INVALID_INPUT");
  assert.equal(verdict.error.details, null);
});

test("validateRunInput: an image over 8 MiB and a body over 12 MiB", () => {
  // 11 MiB of base64 decodes to 8.25 MiB; the body stays under 12 MiB.
  const image = {
    type: "image",
    source: { type: "data", mimeType: "image/png", value: "A".repeat(11 * 1024 * 1024) },
  };
  const big = wasm.validateRunInput(
    JSON.stringify(runBody({ messages: [{ id: "m", role: "user", content: [image] }] })),
  );
  assert.equal(big.error.code, "INVALID_INPUT");
  assert.equal(big.error.message, "An image exceeds the maximum size.");
  const huge = JSON.stringify(runBody({ state: { pad: "x".repeat(12 * 1024 * 1024) } }));
  const tooLarge = wasm.validateRunInput(huge);
  assert.equal(tooLarge.error.code, "REQUEST_TOO_LARGE");
  assert.equal(tooLarge.status, 413);
});

test("validateRunInput: the size limit counts UTF-8 bytes, not UTF-16 units", () => {
  // 4.5 Mi three-byte characters: 13.5 MiB on the wire, 4.5 Mi JS units.
  const body = JSON.stringify(runBody({ state: { pad: "€".repeat(4.5 * 1024 * 1024) } }));
  assert.ok(body.length < 12 * 1024 * 1024);
  assert.equal(wasm.validateRunInput(body).error.code, "REQUEST_TOO_LARGE");
});

test("canonicalJson and canonicalDigest follow SPEC §4", () => {
  const text = '{"b":[3,2,1],"a":{"z":null,"y":true},"é":"ação","big":9007199254740993}';
  const canonical = wasm.canonicalJson(text);
  assert.equal(canonical, '{"a":{"y":true,"z":null},"b":[3,2,1],"big":9007199254740993,"é":"ação"}');
  const sha = createHash("sha256").update(canonical, "utf8").digest("hex");
  assert.equal(wasm.canonicalDigest(text), sha);
  assert.equal(
    wasm.canonicalDigest('{"status":"resolved","payload":{"decision":"allow_once"}}'),
    "289281c743b2a91d60f25b59680f04683bd82766f7a9b2eb405975140373868e",
  );
});

test("canonicalDigest throws an IacAguiError with code INVALID_JSON", () => {
  assert.throws(
    () => wasm.canonicalDigest("{not json"),
    (e) => e instanceof Error && e.name === "IacAguiError" && e.code === "INVALID_JSON" && e.details === null,
  );
});

test("negotiateLanguage and supportedLanguages", () => {
  assert.equal(wasm.negotiateLanguage("pt_BR", "de"), "pt");
  assert.equal(wasm.negotiateLanguage("xx", "es;q=0.2, fr;q=0.9, *;q=0.5"), "fr");
  assert.equal(wasm.negotiateLanguage(undefined, "de;q=0, ko"), "en");
  assert.equal(wasm.negotiateLanguage(null, null), "en");
  assert.deepEqual(wasm.supportedLanguages(), ["en", "zh", "es", "fr", "de", "ja", "pt"]);
});

test("answer builders and buildResume give a body the validator accepts", () => {
  assert.deepEqual(wasm.permissionAnswer("p-1", "allow_once"), {
    interruptId: "p-1",
    status: "resolved",
    payload: { decision: "allow_once" },
  });
  assert.throws(() => wasm.permissionAnswer("p-1", "always"), { code: "RESUME_PAYLOAD_INVALID" });
  assert.deepEqual(wasm.selectionAnswer("q-1", "vpc").payload, { selectedId: "vpc" });
  assert.deepEqual(wasm.freeTextAnswer("q-1", "a small one").payload, { freeText: "a small one" });
  assert.deepEqual(wasm.cancelAnswer("q-1"), { interruptId: "q-1", status: "cancelled" });

  const body = wasm.buildResume({ threadId: "t-1", runId: "r-2", iacCode }, [
    wasm.permissionAnswer("p-1", "deny"),
    wasm.cancelAnswer("q-1"),
  ]);
  assert.equal(body, wasm.canonicalJson(body));
  const parsed = JSON.parse(body);
  assert.deepEqual(parsed.messages, []);
  assert.equal(parsed.resume.length, 2);
  const verdict = wasm.validateRunInput(body);
  assert.equal(verdict.ok, true);
  assert.equal(verdict.resume, true);
  assert.throws(() => wasm.buildResume({ threadId: "t-1", iacCode }, []), { code: "INVALID_INPUT" });
});
