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
