/** A language of the server's messages. */
export type Language = "en" | "zh" | "es" | "fr" | "de" | "ja" | "pt";

/** A protocol error: the stable code, its text in the chosen language, and
 * optional machine-readable details (e.g. the JSON-Schema failure of a
 * resume payload). */
export interface ProtocolErrorInfo {
  code: string;
  message: string;
  details: unknown | null;
}

/** Thrown for misuse of the API (a document that is not JSON, …): an
 * `Error` named `IacAguiError` carrying the same `code` and `details`. */
export interface IacAguiError extends Error {
  name: "IacAguiError";
  code: string;
  details: unknown | null;
}

/** Options of `validateRunInput`. */
export interface ValidateOptions {
  /** The Accept-Language header the request will carry. */
  acceptLanguage?: string;
  /** The page's language, used when the body names no supported
   * `forwardedProps.iacCode.preferredLanguage`. */
  preferredLanguage?: string;
}

/** What `validateRunInput` says about a `POST /` body. */
export type RunInputVerdict =
  | {
      ok: true;
      threadId: string;
      runId: string;
      /** SHA-256 of the canonical JSON of the body (duplicate detection). */
      digest: string;
      language: Language;
      /** True when the body answers interrupts. */
      resume: boolean;
      /** Checks only the server can make: resolving the workspace and
       * decoding image bytes ("imageDecoding", when images are present). */
      serverChecks: Array<"workspace" | "imageDecoding">;
    }
  | {
      ok: false;
      /** The HTTP status the server answers with. */
      status: number;
      language: Language;
      error: ProtocolErrorInfo;
    };

/** A permission interrupt's answer. */
export type PermissionDecision = "allow_once" | "deny";

/** One answer of a resume. */
export interface ResumeEntry {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
  metadata?: Record<string, unknown>;
}

/** What `buildResume` needs besides the answers. */
export interface ResumeBase {
  threadId: string;
  /** A fresh run id. */
  runId: string;
  /** The thread's `forwardedProps.iacCode` (same `rosInvocationId`). */
  iacCode: Record<string, unknown>;
  parentRunId?: string;
  state?: unknown;
}

/** Options of `EventStreamChecker` and `checkEvents`: when both ids are
 * given, RUN_STARTED must carry them. */
export interface StreamCheckOptions {
  threadId?: string;
  runId?: string;
}

/** The first rule an event stream broke. */
export interface StreamViolation {
  /** 0-based index of the offending event (the event count at the end). */
  index: number;
  /** Stable rule name, e.g. "TEXT_NOT_OPEN", "OPEN_AT_FINISH",
   * "EVENT_AFTER_TERMINAL", "MISSING_TERMINAL", "INVALID_EVENT". */
  rule: string;
  /** The message id, tool call id, step name or field involved. */
  subject: string | null;
  /** An English explanation for developers. */
  message: string;
}

/** An AG-UI event as sent by the server. */
export interface AgUiEvent {
  type: string;
  timestamp?: number;
  [key: string]: unknown;
}

/** What one `push` completed. */
export interface StreamPushResult {
  events: AgUiEvent[];
  /** Comment lines seen (`: heartbeat`). */
  comments: number;
  /** The first violation so far; once set it stays. */
  violation: StreamViolation | null;
}

/** The end of a stream. */
export interface StreamFinishResult {
  /** Events seen in the whole stream. */
  events: number;
  violation: StreamViolation | null;
}

/** A golden case file split without loss (`goldenCase`). */
export interface GoldenCase {
  kind: string;
  /** Canonical JSON of the case input. */
  input: string;
  /** Canonical JSON of the expected outputs, or null when absent. */
  expected: string | null;
}

/** Options of `validateResume`. */
export interface ResumeCheckOptions {
  /** Language of the messages (as the request's preferredLanguage). */
  preferredLanguage?: string;
  /** Fallback: an Accept-Language value. */
  acceptLanguage?: string;
  /** When given (e.g. `Date.now()`), an interrupt whose `expiresAt` is at or
   * before it makes the verdict `EXECUTION_EXPIRED`. */
  nowMs?: number;
}

/** An AG-UI interrupt (`RUN_FINISHED.outcome.interrupts[]`). */
export interface Interrupt {
  id: string;
  reason: string;
  message?: string;
  toolCallId?: string;
  responseSchema?: Record<string, unknown>;
  expiresAt?: string;
  metadata?: Record<string, unknown>;
}

/** What `validateResume` says. `error` is the server's verdict on the whole
 * resume (its first refusal); `entries` judges each entry on its own;
 * `missing` lists pending interrupts without an entry. */
export interface ResumeVerdict {
  ok: boolean;
  error: ProtocolErrorInfo | null;
  entries: Array<{ interruptId: string; ok: boolean; error: ProtocolErrorInfo | null }>;
  missing: string[];
}
