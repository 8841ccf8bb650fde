// Drives one permission interrupt -> resume flow against a live iac-agui
// server with each official client's own API: `HttpAgent.runAgent()` for the
// turn, then `buildResumeArray(agent.pendingInterrupts, …)` and
// `runAgent({ resume })` for the answer, as an application would.
//
// Usage: node resume-flow.mjs <server URL> <workspace dir> [decision]
// The bearer token, if the server needs one, comes from IAC_AGUI_TOKEN.
// Prints {"<version>": {ok, error?, first, second}} and exits 0 when every
// client saw an interrupt on the first run and a success after the resume.

import * as v0 from "@ag-ui/client";
import * as v1 from "agui-client-v1";

const [url, cwd, decision = "allow_once"] = process.argv.slice(2);
if (!url || !cwd) {
  console.error("usage: node resume-flow.mjs <server URL> <workspace dir> [decision]");
  process.exit(2);
}
const token = process.env.IAC_AGUI_TOKEN;
const log = [];
console.warn = (...parts) => log.push(parts.map(String).join(" "));
console.error = console.warn;
console.debug = () => {};

const results = {};
for (const [version, lib] of [
  ["0.0.58", v0],
  ["1.0.0", v1],
]) {
  results[version] = await flow(version, lib);
}
process.stdout.write(JSON.stringify(results) + "\n");
process.exitCode = Object.values(results).every((r) => r.ok) ? 0 : 1;

async function flow(version, lib) {
  const tag = version.replaceAll(".", "-");
  const agent = new lib.HttpAgent({
    url,
    threadId: `resume-api-${tag}-${process.pid}`,
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    initialMessages: [{ id: `user-${tag}`, role: "user", content: "please scenario:permission" }],
  });
  const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: `ros-api-${tag}`, cwd } };
  const out = { ok: false };
  try {
    out.first = await runOnce(agent, { runId: `run-1-${tag}`, forwardedProps });
    const pending = agent.pendingInterrupts ?? [];
    out.first.pending = pending.length;
    if (out.first.outcome !== "interrupt" || pending.length === 0) {
      out.error = "the first run did not end with an interrupt";
      return out;
    }
    const responses = Object.fromEntries(
      pending.map((i) => [i.id, { status: "resolved", payload: { decision } }]),
    );
    const resume = lib.buildResumeArray(pending, responses);
    out.second = await runOnce(agent, { runId: `run-2-${tag}`, forwardedProps, resume });
    out.second.pending = (agent.pendingInterrupts ?? []).length;
    out.ok = out.second.outcome === "success" && out.second.pending === 0;
    if (!out.ok) out.error = "the resume did not end in success";
  } catch (e) {
    out.error = e instanceof Error ? e.message : String(e);
  }
  out.warnings = log.splice(0).filter((w) => !w.startsWith("Agent execution failed"));
  if (out.warnings.length > 0 && out.ok) {
    out.ok = false;
    out.error = "the client printed warnings";
  }
  return out;
}

async function runOnce(agent, parameters) {
  const seen = { types: [] };
  await agent.runAgent(parameters, {
    onEvent: ({ event }) => void seen.types.push(event.type),
    onRunFinishedEvent: ({ event }) => {
      seen.outcome = event.outcome?.type ?? "success";
      seen.interrupts = event.outcome?.interrupts?.map((i) => i.id) ?? [];
    },
    onRunErrorEvent: ({ event }) => {
      seen.outcome = `error:${event.code ?? ""}`;
    },
  });
  return seen;
}
