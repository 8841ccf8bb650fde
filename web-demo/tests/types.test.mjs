// The package's TypeScript types: a typical frontend use compiles under
// `strict`, and the marked misuses are rejected (`@ts-expect-error` fails the
// build if they ever compile). Needs web-demo/pkg and `npm ci` here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

test("the generated .d.ts types a frontend precisely", () => {
  const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
  const project = fileURLToPath(new URL("./types/tsconfig.json", import.meta.url));
  const run = spawnSync(process.execPath, [tsc, "-p", project], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});
