// The iac-agui web demo: one page that talks AG-UI (POST / + SSE) to the
// server it is served from, and checks every request, every interrupt answer
// and the event stream itself with host-wasm — the server's own core — so a
// bad answer is refused here, with the server's code and message, before
// anything is sent.
import init, * as core from "./pkg/iac_agui_wasm.js";

const $ = (id) => document.getElementById(id);
const server = new URL(new URLSearchParams(location.search).get("server") ?? "/", location.href);

const state = {
  threadId: crypto.randomUUID(),
  rosInvocationId: `demo-${crypto.randomUUID()}`,
  executionId: null,
  pending: [], // interrupts awaiting an answer
  running: null, // AbortController of the active run
  nodes: new Map(), // message / tool call id → element
};

await init();
setup();

function setup() {
  for (const lang of core.supportedLanguages()) $("language").append(new Option(lang, lang));
  $("language").value = core.negotiateLanguage(null, navigator.languages.join(","));
  $("thread-id").textContent = state.threadId;
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    sendMessage();
  });
  $("cancel").addEventListener("click", cancelRun);
  $("new-thread").addEventListener("click", () => {
    state.threadId = crypto.randomUUID();
    state.executionId = null;
    state.pending = [];
    $("thread-id").textContent = state.threadId;
    for (const id of ["execution-id", "task-id", "session-id"]) $(id).textContent = "–";
    $("transcript").replaceChildren();
    $("interrupts").hidden = true;
  });
  setStatus("ready");
}

const language = () => $("language").value;

function iacCode() {
  return {
    schemaVersion: 1,
    rosInvocationId: state.rosInvocationId,
    cwd: $("cwd").value,
    preferredLanguage: language(),
  };
}

function sendMessage() {
  if (state.running) return;
  if (state.pending.length) {
    note("refused", "Answer the pending interrupts first (the server would say RESUME_REQUIRED).");
    return;
  }
  const scenario = $("scenario").value;
  const text = $("message").value + (scenario ? ` scenario:${scenario}` : "");
  const runId = crypto.randomUUID();
  const body = JSON.stringify({
    threadId: state.threadId,
    runId,
    state: {},
    messages: [{ id: crypto.randomUUID(), role: "user", content: text }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: iacCode() },
  });
  const verdict = core.validateRunInput(body, { preferredLanguage: language() });
  if (!verdict.ok) return refuse(verdict.error);
  note("user", $("message").value);
  run(body, runId);
}

/** POSTs a validated body and renders its event stream. */
async function run(body, runId) {
  const controller = new AbortController();
  state.running = controller;
  $("send").disabled = true;
  updateCancel();
  setStatus("running…");
  const checker = new core.EventStreamChecker({ threadId: state.threadId, runId });
  let violation = null;
  try {
    const headers = {
      "Content-Type": "application/json",
      Accept: "text/event-stream",
      "Accept-Language": language(),
    };
    if ($("token").value) headers.Authorization = `Bearer ${$("token").value}`;
    const response = await fetch(server, { method: "POST", headers, body, signal: controller.signal });
    if (!response.ok) {
      const envelope = await response.json().catch(() => ({}));
      const error = envelope.error ?? { code: `HTTP ${response.status}`, message: response.statusText };
      note("error", `${error.code}: ${error.message}`);
      setStatus(`refused by the server (${response.status})`);
      return;
    }
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const out = checker.push(value);
      out.events.forEach(render);
      if (out.violation && !violation) violation = out.violation;
    }
    violation ??= checker.finish().violation;
  } catch (e) {
    if (e.name !== "AbortError") note("error", `connection: ${e.message}`);
  } finally {
    checker.free();
    state.running = null;
    $("send").disabled = false;
    updateCancel();
  }
  if (violation) note("violation", `AG-UI stream violation at event ${violation.index}: ${violation.rule} — ${violation.message}`);
}

function render(event) {
  switch (event.type) {
    case "RUN_STARTED":
      setStatus(`run ${event.runId} started`);
      break;
    case "TEXT_MESSAGE_START":
      state.nodes.set(event.messageId, note("assistant", ""));
      break;
    case "TEXT_MESSAGE_CONTENT":
      (state.nodes.get(event.messageId) ?? note("assistant", "")).append(event.delta);
      break;
    case "REASONING_MESSAGE_START": {
      const details = el("details", { className: "item reasoning" }, el("summary", {}, "Reasoning"));
      const body = el("div");
      details.append(body);
      $("transcript").append(details);
      state.nodes.set(`r:${event.messageId}`, body);
      break;
    }
    case "REASONING_MESSAGE_CONTENT":
      state.nodes.get(`r:${event.messageId}`)?.append(event.delta);
      break;
    case "TOOL_CALL_START": {
      const args = el("pre", { className: "args" });
      const box = note("tool", `tool ${event.toolCallName}`);
      box.append(args);
      state.nodes.set(`t:${event.toolCallId}`, box);
      state.nodes.set(`a:${event.toolCallId}`, args);
      break;
    }
    case "TOOL_CALL_ARGS":
      state.nodes.get(`a:${event.toolCallId}`)?.append(event.delta);
      break;
    case "TOOL_CALL_RESULT": {
      const box = state.nodes.get(`t:${event.toolCallId}`) ?? note("tool", `tool call ${event.toolCallId}`);
      box.append(el("pre", { className: "result" }, `→ ${event.content}`));
      break;
    }
    case "STEP_STARTED":
      note("step", `▶ ${event.stepName}`);
      break;
    case "STEP_FINISHED":
      note("step", `✓ ${event.stepName}`);
      break;
    case "ACTIVITY_SNAPSHOT": {
      const key = `act:${event.messageId}`;
      state.nodes.get(key)?.remove();
      state.nodes.set(key, collapsible("activity", `activity · ${event.activityType}`, event.content));
      break;
    }
    case "CUSTOM":
      if (event.name === "iac-code.session.v1") showIds(event.value);
      else collapsible("custom", `${event.name}${event.value?.eventType ? ` · ${event.value.eventType}` : ""}`, event.value);
      break;
    case "RUN_FINISHED":
      showUsage(event.usage);
      if (event.outcome?.type === "interrupt") showInterrupts(event.outcome.interrupts);
      setStatus(event.outcome?.type === "interrupt" ? "waiting for your answer" : "finished");
      break;
    case "RUN_ERROR":
      showUsage(event.usage);
      note("error", `${event.code}: ${event.message}`);
      setStatus("failed");
      break;
  }
}

function showIds(ids) {
  state.executionId = ids.executionId ?? state.executionId;
  $("execution-id").textContent = ids.executionId ?? "–";
  $("task-id").textContent = ids.taskId ?? "–";
  $("session-id").textContent = ids.sessionId ?? "–";
  updateCancel();
}

/** Cancel applies to the current execution while it runs or waits. */
function updateCancel() {
  $("cancel").disabled = !(state.executionId && (state.running || state.pending.length));
}

function showUsage(usage) {
  if (!usage?.length) return;
  $("usage").textContent = usage
    .map((u) => `${u.model ?? "model"}: ${u.inputTokens} in / ${u.outputTokens} out`)
    .join(" · ");
}

/** One form for all pending interrupts, built from message, responseSchema
 * and the descriptive metadata (never from `reason` alone). */
function showInterrupts(interrupts) {
  state.pending = interrupts;
  const box = $("interrupts");
  box.replaceChildren();
  for (const it of interrupts) {
    const meta = it.metadata ?? {};
    const part = el("div", { className: "interrupt" });
    part.dataset.interruptId = it.id;
    part.append(el("h3", {}, meta.title ?? (it.reason === "tool_call" ? "Permission" : "Question")));
    const facts = [["tool", meta.toolName], ["purpose", meta.purpose], ["summary", meta.safeSummary]]
      .filter(([, v]) => v)
      .map(([k, v]) => `${k}: ${v}`);
    if (facts.length) part.append(el("div", { className: "meta" }, facts.join(" · ")));
    if (it.message) part.append(el("div", { className: "message" }, it.message));
    for (const [value, label] of choices(it)) {
      const input = el("input", { type: "radio", name: `answer-${it.id}`, value });
      part.append(el("label", {}, input, ` ${label}`));
      if (value === "__free") part.append(el("input", { type: "text", name: `free-${it.id}`, size: 40 }));
    }
    box.append(part);
  }
  const submit = el("button", { type: "button", id: "submit-answers" }, "Send answers");
  submit.addEventListener("click", answerInterrupts);
  box.append(submit);
  box.hidden = false;
  updateCancel();
}

/** The choices an interrupt's responseSchema allows, plus declining. */
function choices(it) {
  const schema = it.responseSchema ?? {};
  const list = [];
  for (const d of schema.properties?.decision?.enum ?? []) {
    list.push([d, d === "allow_once" ? "Allow once" : d === "deny" ? "Deny" : d]);
  }
  for (const branch of schema.oneOf ?? []) {
    const p = branch.properties ?? {};
    if (p.selectedId) list.push([`id:${p.selectedId.const}`, p.selectedId.title ?? p.selectedId.const]);
    if (p.freeText) list.push(["__free", "Other:"]);
  }
  list.push(["__cancel", "Decline"]);
  return list;
}

/** Builds the answers, judges them in the page, sends only what passes. */
function answerInterrupts() {
  const answers = state.pending.map((it) => {
    const chosen = [...document.getElementsByName(`answer-${it.id}`)].find((i) => i.checked)?.value;
    if (chosen === "__cancel") return core.cancelAnswer(it.id);
    if (chosen === "__free") {
      return core.freeTextAnswer(it.id, document.getElementsByName(`free-${it.id}`)[0].value);
    }
    if (chosen?.startsWith("id:")) return core.selectionAnswer(it.id, chosen.slice(3));
    if (chosen) return { interruptId: it.id, status: "resolved", payload: { decision: chosen } };
    return { interruptId: it.id, status: "resolved", payload: {} }; // nothing chosen
  });
  const verdict = core.validateResume(JSON.stringify(answers), JSON.stringify(state.pending), {
    preferredLanguage: language(),
    nowMs: Date.now(),
  });
  if (!verdict.ok) return refuse(verdict.error, verdict.entries);
  const runId = crypto.randomUUID();
  const body = core.buildResume({ threadId: state.threadId, runId, iacCode: iacCode() }, answers);
  const check = core.validateRunInput(body, { preferredLanguage: language() });
  if (!check.ok) return refuse(check.error);
  state.pending = [];
  $("interrupts").hidden = true;
  note("user", `answered: ${answers.map((a) => JSON.stringify(a.payload ?? a.status)).join(", ")}`);
  run(body, runId);
}

async function cancelRun() {
  if (!state.executionId) return;
  const url = new URL(`extensions/iac-code/v1/executions/${encodeURIComponent(state.executionId)}/cancel`, server);
  const headers = { "Content-Type": "application/json", "Accept-Language": language() };
  if ($("token").value) headers.Authorization = `Bearer ${$("token").value}`;
  const body = JSON.stringify({ threadId: state.threadId, rosInvocationId: state.rosInvocationId });
  const response = await fetch(url, { method: "POST", headers, body });
  const answer = await response.json().catch(() => ({}));
  note(response.ok ? "step" : "error", response.ok ? `cancel: ${answer.status}` : `${answer.error?.code}: ${answer.error?.message}`);
  if (response.ok) {
    state.pending = [];
    $("interrupts").hidden = true;
    updateCancel();
  }
}

/** A refusal decided in the page: nothing was sent. */
function refuse(error, entries = []) {
  const box = note("refused", `Not sent — ${error.code}: ${error.message}`);
  box.dataset.code = error.code;
  for (const entry of entries.filter((e) => !e.ok)) {
    box.append(el("div", {}, `${entry.interruptId}: ${entry.error.code} ${JSON.stringify(entry.error.details ?? "")}`));
  }
  setStatus(`refused in the page: ${error.code}`);
}

/** A folded entry whose JSON body opens on click. */
function collapsible(kind, title, value) {
  const node = el("details", { className: `item ${kind}` }, el("summary", {}, title));
  node.append(el("pre", {}, JSON.stringify(value, null, 1)));
  $("transcript").append(node);
  return node;
}

function note(kind, text) {
  const node = el("div", { className: `item ${kind}` }, text);
  $("transcript").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

function setStatus(text) {
  $("status").textContent = text;
}

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}
