// The web demo in headless Chromium against the real server with its
// scripted runtime (`iac-agui serve --demo`): a plain run, a permission
// interrupt answered "allow", and a bad answer refused in the page with no
// request sent. A screenshot is left as a test artifact.
//
// Needs: the wasm web build in web-demo/pkg/ (`bash .ci/wasm.sh --build-only`),
// the `iac-agui` binary (IAC_AGUI_BIN, else $CARGO_TARGET_DIR/debug/iac-agui),
// Debian's chromium (/usr/bin/chromium) and `npm ci` in web-demo/.
// The page is opened at the server's own /demo/ (this web-demo/ directory,
// named with --demo-dir so that a binary built elsewhere serves these files),
// so it is same-origin with the AG-UI endpoint.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const demoDir = fileURLToPath(new URL("..", import.meta.url));
const repo = join(demoDir, "..");
const artifacts = process.env.ARTIFACT_DIR ?? join(demoDir, "artifacts");
const binary =
  process.env.IAC_AGUI_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, "target"), "debug", "iac-agui");
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

let serverProc;
let browser;
let base; // URL of /demo/
let stateDir;

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });

async function waitFor(url, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  assert.ok(existsSync(binary), `iac-agui binary not found at ${binary} (set IAC_AGUI_BIN)`);
  assert.ok(existsSync(join(demoDir, "pkg", "iac_agui_wasm.js")), "web-demo/pkg missing: run .ci/wasm.sh");
  mkdirSync(artifacts, { recursive: true });
  stateDir = mkdtempSync(join(tmpdir(), "iac-agui-demo-state-"));
  const port = await freePort();
  const env = { ...process.env };
  delete env.IAC_CODE_AGUI_AUTH_TOKEN;
  const args = ["serve", "--demo", "--demo-dir", demoDir, "--port", String(port), "--state-dir", stateDir];
  serverProc = spawn(binary, args, { stdio: ["ignore", "inherit", "inherit"], env });
  await waitFor(`http://127.0.0.1:${port}/health`);
  base = `http://127.0.0.1:${port}/demo/`;
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: FLAGS, headless: true });
});

after(async () => {
  await browser?.close();
  serverProc?.kill("SIGTERM");
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

test("the server serves the demo files with their media types", async () => {
  const index = await fetch(base);
  assert.equal(index.status, 200);
  assert.equal(index.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(await index.text(), readFileSync(join(demoDir, "index.html"), "utf8"));
  const wasm = await fetch(new URL("pkg/iac_agui_wasm_bg.wasm", base));
  assert.equal(wasm.status, 200);
  assert.equal(wasm.headers.get("content-type"), "application/wasm");
  const js = await fetch(new URL("app.js", base), { method: "HEAD" });
  assert.equal(js.headers.get("content-type"), "text/javascript");
  const bare = await fetch(base.replace(/\/$/, ""), { redirect: "manual" });
  assert.equal(bare.headers.get("location"), "/demo/");
  // Sent verbatim: fetch() would resolve the dots before sending.
  for (const path of ["/demo/../Cargo.toml", "/demo/%2e%2e/Cargo.toml", "/demo/..%2fCargo.toml"]) {
    assert.equal(await rawStatus(path), 404, path);
  }
});

/** The status of a GET for `path` exactly as written. */
const rawStatus = (path) =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    http.get({ host: hostname, port, path }, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on("error", reject);
  });

/** A fresh page on /demo/ that counts the AG-UI requests it sends. */
async function openDemo() {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const runs = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/") runs.push(r.postData());
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(base);
  await page.waitForFunction(() => document.getElementById("status").textContent === "ready");
  await page.selectOption("#language", "en");
  return { page, runs, errors };
}

const status = (page, text) =>
  page.waitForFunction((t) => document.getElementById("status").textContent === t, text, { timeout: 20000 });

test("a plain run streams text to the end with a valid AG-UI stream", async () => {
  const { page, runs, errors } = await openDemo();
  await page.selectOption("#scenario", "plain");
  await page.click("#send");
  await status(page, "finished");
  assert.equal(runs.length, 1);
  const text = await page.locator(".item.assistant").allTextContents();
  assert.ok(text.join("").trim().length > 0, "no assistant text rendered");
  assert.equal(await page.locator(".item.violation, .item.error").count(), 0);
  assert.notEqual(await page.textContent("#session-id"), "–", "session ids not shown");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a permission interrupt: a bad answer is refused in the page, then allow runs the tool", async () => {
  const { page, runs, errors } = await openDemo();
  await page.selectOption("#scenario", "permission");
  await page.click("#send");
  await status(page, "waiting for your answer");
  await page.waitForSelector("#interrupts:not([hidden]) .interrupt");
  assert.equal(runs.length, 1);
  await page.screenshot({ path: join(artifacts, "demo-interrupt.png"), fullPage: true });

  // No decision chosen: the server would answer RESUME_PAYLOAD_INVALID.
  await page.click("#submit-answers");
  const refused = page.locator(".item.refused").last();
  await refused.waitFor();
  assert.equal(await refused.getAttribute("data-code"), "RESUME_PAYLOAD_INVALID");
  assert.equal(runs.length, 1, "a refused answer must not be sent");

  await page.check('#interrupts input[value="allow_once"]');
  await page.click("#submit-answers");
  await status(page, "finished");
  assert.equal(runs.length, 2);
  assert.deepEqual(JSON.parse(runs[1]).resume[0].payload, { decision: "allow_once" });
  assert.match((await page.locator(".item.tool").allTextContents()).join("\n"), /Exit code: 0/);
  assert.equal(await page.locator(".item.violation, .item.error").count(), 0);
  await page.screenshot({ path: join(artifacts, "demo-permission.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a question: empty free text is refused in the page, then an option is chosen", async () => {
  const { page, runs, errors } = await openDemo();
  await page.selectOption("#scenario", "question");
  await page.click("#send");
  await status(page, "waiting for your answer");
  await page.check('#interrupts input[value="__free"]');
  await page.click("#submit-answers");
  await page.locator('.item.refused[data-code="RESUME_PAYLOAD_INVALID"]').waitFor();
  assert.equal(runs.length, 1, "a refused answer must not be sent");
  await page.check('#interrupts input[value="id:cn-beijing"]');
  await page.click("#submit-answers");
  await status(page, "finished");
  assert.equal(runs.length, 2);
  assert.deepEqual(JSON.parse(runs[1]).resume[0].payload, { selectedId: "cn-beijing" });
  assert.equal(await page.locator(".item.violation, .item.error").count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the cancel button ends a running execution through the cancel extension", async () => {
  const { page } = await openDemo();
  await page.selectOption("#scenario", "cancel");
  await page.click("#send");
  await page.waitForSelector("#cancel:not([disabled])", { timeout: 20000 });
  await page.click("#cancel");
  await status(page, "failed");
  assert.match(await page.locator(".item.error").last().textContent(), /^CANCELLED: /);
  // The cancel answer and the stream's RUN_ERROR may arrive in either order.
  await page.locator(".item.step", { hasText: "cancel: cancelled" }).waitFor();
  assert.equal(await page.locator(".item.violation").count(), 0);
  await page.close();
});

test("errors are shown translated in the chosen language", async () => {
  const { page, runs } = await openDemo();
  await page.selectOption("#language", "pt");
  await page.fill("#cwd", "relative/path");
  await page.selectOption("#scenario", "plain");
  await page.click("#send");
  // The workspace is judged by the server only: the request goes out.
  await page.locator(".item.error").waitFor();
  assert.equal(runs.length, 1);
  const message = await page.locator(".item.error").textContent();
  assert.match(message, /^INVALID_INPUT: /);
  assert.doesNotMatch(message, /must be an absolute path/, "message not translated");
  await page.close();
});
