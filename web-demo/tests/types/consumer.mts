// Compiled (not run) by types.test.mjs: a frontend's use of the package must
// type-check against the generated .d.ts, and misuse must not.
import init, {
  EventStreamChecker,
  buildResume,
  canonicalDigest,
  cancelAnswer,
  checkEvents,
  freeTextAnswer,
  negotiateLanguage,
  permissionAnswer,
  selectionAnswer,
  supportedLanguages,
  validateResume,
  validateRunInput,
  type Interrupt,
  type Language,
  type ResumeEntry,
  type RunInputVerdict,
  type StreamViolation,
} from "../../pkg/iac_agui_wasm.js";

await init();
const verdict: RunInputVerdict = validateRunInput("{}", { acceptLanguage: "pt" });
if (verdict.ok) {
  const digest: string = verdict.digest;
  const checks: Array<"workspace" | "imageDecoding"> = verdict.serverChecks;
  console.log(digest, checks);
} else {
  const status: number = verdict.status;
  const code: string = verdict.error.code;
  console.log(status, code, verdict.error.details);
}
const language: Language = negotiateLanguage("pt", navigator.language);
const all: Language[] = supportedLanguages();
const answers: ResumeEntry[] = [
  permissionAnswer("p", "allow_once"),
  selectionAnswer("q", "a"),
  freeTextAnswer("q2", "x"),
  cancelAnswer("q3"),
];
// @ts-expect-error: only allow_once and deny are decisions
permissionAnswer("p", "allow_always");
const pending: Interrupt[] = [];
const resume = validateResume(JSON.stringify(answers), JSON.stringify(pending), { nowMs: Date.now() });
const firstBad: string | undefined = resume.entries.find((e) => !e.ok)?.error?.code;
const body: string = buildResume({ threadId: "t", runId: "r", iacCode: {} }, answers);
// @ts-expect-error: a resume needs its run id
buildResume({ threadId: "t", iacCode: {} }, answers);
const checker = new EventStreamChecker({ threadId: "t", runId: "r" });
const pushed = checker.push(new Uint8Array());
const violation: StreamViolation | null = pushed.violation ?? checker.finish().violation;
const listed: StreamViolation | null = checkEvents("[]");
console.log(language, all, firstBad, body, violation?.rule, listed?.index, canonicalDigest("{}"));
