// Runs AG-UI SSE text through the official TypeScript clients and prints a
// JSON verdict per client.
//
// Each stream is handed to a real `HttpAgent` of each pinned client
// (`@ag-ui/client@0.0.58` and `@ag-ui/client@1.0.0`) through its `fetch`
// hook, so the published packages do all the work: SSE parsing, the zod event
// schemas, chunk expansion, `verifyEvents`, the default reducer. Nothing of
// that is re-implemented here. A run is accepted when `runAgent()` resolves.
//
// Usage:
//   node check.mjs [FILE]      one stream (FILE or stdin) -> one JSON object
//   node check.mjs --jsonl     stdin lines {"name":..,"sse":..} -> one JSON
//                              line {"name":..,"verdicts":{..}} per input line
//
// Verdict per client: {ok, error?, events, types, terminal, warnings, outcome?}
// `terminal` says whether the last event was RUN_FINISHED or RUN_ERROR (the
// clients themselves never check that; the Rust harness does). `warnings`
// holds what the client printed with console.warn/error during the run
// (1.0.0 reports stripped keys and dropped events there).
//
// Exit status: 0 when every client accepted every stream, 1 otherwise,
// 2 on bad usage.

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import * as v0 from "@ag-ui/client";
import * as v1 from "agui-client-v1";

const CLIENTS = [
  ["0.0.58", v0],
  ["1.0.0", v1],
];

const args = process.argv.slice(2);
if (args.includes("--help")) {
  console.log("usage: node check.mjs [FILE] | node check.mjs --jsonl < lines");
  process.exit(2);
}

const captured = captureConsole();

if (args[0] === "--jsonl") {
  let allOk = true;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const item = JSON.parse(line);
    const verdicts = await checkAll(item.sse);
    allOk &&= Object.values(verdicts).every((v) => v.ok);
    process.stdout.write(JSON.stringify({ name: item.name, verdicts }) + "\n");
  }
  process.exitCode = allOk ? 0 : 1;
} else {
  const text = args[0] ? readFileSync(args[0], "utf8") : readFileSync(0, "utf8");
  const verdicts = await checkAll(text);
  process.stdout.write(JSON.stringify(verdicts) + "\n");
  process.exitCode = Object.values(verdicts).every((v) => v.ok) ? 0 : 1;
}

/** Runs one SSE text through every pinned client. */
async function checkAll(text) {
  const out = {};
  for (const [version, lib] of CLIENTS) {
    out[version] = await checkWith(lib, text);
  }
  return out;
}

/** Drives one client's full `runAgent` pipeline over a canned response. */
async function checkWith(lib, text) {
  const events = [];
  const agent = new lib.HttpAgent({
    url: "http://agui-check.invalid/",
    fetch: async () => cannedResponse(text),
  });
  captured.length = 0;
  let error;
  try {
    await agent.runAgent({}, { onEvent: ({ event }) => void events.push(event) });
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  const last = events.at(-1);
  const verdict = {
    ok: error === undefined,
    events: events.length,
    types: events.map((e) => e.type),
    terminal: last?.type === "RUN_FINISHED" || last?.type === "RUN_ERROR",
    warnings: captured.filter((w) => !w.startsWith("Agent execution failed")),
  };
  if (error !== undefined) verdict.error = error;
  if (last?.type === "RUN_FINISHED" && last.outcome) verdict.outcome = last.outcome.type;
  return verdict;
}

/** A 200 text/event-stream response whose body arrives in small chunks, so
 * the clients' incremental decoders see records and code points split. */
function cannedResponse(text) {
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
      controller.close();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream" },
  });
}

/** Collects console.warn/error output (the clients' diagnostics) instead of
 * letting it interleave with the JSON on stdout. */
function captureConsole() {
  const lines = [];
  const keep = (...parts) =>
    lines.push(parts.map((p) => (p instanceof Error ? p.message : typeof p === "string" ? p : safeJson(p))).join(" "));
  console.warn = keep;
  console.error = keep;
  console.debug = () => {};
  return lines;
}

function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
