/**
 * The CLI's last words reach a pipe read slowly (the fail-closed flake, wave 10). On POSIX,
 * stdout and stderr on a pipe are asynchronous (Node's "A note on process I/O"): what the pipe
 * cannot take at once waits in the stream, and process.exit() right after the write drops it.
 * Deterministic: the child's stderr is a pipe this test does not read until the child says (on
 * fd 3, from a preload) that its write had to wait; a config with 20 000 missing secrets makes
 * the one error message ~1.6 MB, far more than the pipe (64 KiB) and the reader's buffer hold.
 * Before the fix (run-cli.ts exited at once) the test got ~100-400 KB of it; now all of it.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BIN, cleanEnv, scratchDir } from "./cli-fixtures.ts";

const MARKER = new URL("./stderr-queued-marker.mjs", import.meta.url).href;
const SOURCES = 20_000;

/** Resolves when `stream` has carried `text` (a line from the preload). */
function heard(stream: Readable, text: string): Promise<void> {
  let seen = "";
  return new Promise((resolve) => {
    stream.on("data", (chunk) => {
      seen += chunk;
      if (seen.includes(text)) resolve();
    });
  });
}

describe("the CLI's exit waits for its output", () => {
  it("an invalid configuration's whole message (1.6 MB on stderr) reaches a reader that reads late, exit 1", {
    timeout: 240_000,
  }, async () => {
    const dir = await scratchDir();
    const sources = Array.from({ length: SOURCES }, (_, i) => ({
      id: `s${i}`,
      service: "esign",
      secrets: [`\${MISSING_SECRET_${i}}`],
    }));
    await writeFile(
      join(dir, "gateway.json"),
      JSON.stringify({ store: { driver: "sqlite", dir: "./store" }, sources }),
    );
    const child = spawn(process.execPath, ["--import", MARKER, BIN, "validate", "--config", "gateway.json"], {
      cwd: dir,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    const closed = once(child, "close");
    const fd3 = child.stdio[3] as Readable;
    // Not read until the child's write waited (or the child is gone): the pipe stays full.
    await Promise.race([heard(fd3, "queued"), once(child, "exit")]);
    let stderr = "";
    (child.stdio[2] as Readable).on("data", (chunk) => {
      stderr += chunk;
    });
    (child.stdio[1] as Readable).resume();
    const [code] = await closed;

    const lines = stderr.trimEnd().split("\n");
    const missing = lines.filter((l) =>
      / - sources\.\d+\.secrets\.0: environment variable MISSING_SECRET_\d+ is not set$/.test(l),
    );
    expect(code, stderr.slice(0, 2000)).toBe(1);
    expect(missing.length, `${stderr.length} bytes on stderr; its end: ${stderr.slice(-300)}`).toBe(SOURCES);
    expect(lines.at(-1)).toBe(
      `  - sources.${SOURCES - 1}.secrets.0: environment variable MISSING_SECRET_${SOURCES - 1} is not set`,
    );
  });
});
