/**
 * `gateway hash-key`: prints exactly the value `GATEWAY_ADMIN_KEY_HASH` and `apiKeyHashes` take
 * (a Worker configured with it authenticates the key; the old template's `sha256:<output>` is
 * refused by name), reads the key from stdin (`-`, or no argument with a pipe) so it stays out of
 * shell history, answers --help with usage rather than hashing "--help", and refuses flags.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createWorkerConfig } from "../../adapters/cloudflare/worker-config.ts";
import { ConfigError } from "../../src/config/resolve-config.ts";
import { gateway, STACK_LINE } from "./cli-fixtures.ts";

const KEY = "dev_admin_key_0123456789";
const HASH = `sha256:${createHash("sha256").update(KEY).digest("hex")}`;
const WEBHOOK_SECRETS = {
  ESIGN_WEBHOOK_SECRET: "dev_esign_secret_0123456789abcdef",
  STAFFING_WEBHOOK_SECRET: "dev_staffing_secret_0123456789abcd",
};

describe("gateway hash-key", () => {
  it.each([
    ["the argument", [KEY], ""],
    ["stdin with -", ["-"], KEY],
    ["stdin with - and the shell's newline (echo key |)", ["-"], `${KEY}\n`],
    ["piped stdin without an argument", [], KEY],
  ])("reads the key from %s and prints one line, sha256:<hex>", async (_, args, input) => {
    const run = await gateway(["hash-key", ...args], { input });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${HASH}\n`);
  });

  it("warns (on stderr, outside $(...)) that an argument stays in shell history", async () => {
    const run = await gateway(["hash-key", KEY]);
    expect(run.stderr).toContain("shell history");
    expect(run.stderr).not.toContain(KEY);
  });

  it("its output is exactly GATEWAY_ADMIN_KEY_HASH; sha256: in front of it is refused by name", async () => {
    const printed = (await gateway(["hash-key", "-"], { input: KEY })).stdout.trim();
    const config = createWorkerConfig({ ...WEBHOOK_SECRETS, GATEWAY_ADMIN_KEY_HASH: printed });
    expect(config.admin.apiKeyHashes).toEqual([HASH]);
    let error: unknown;
    try {
      createWorkerConfig({ ...WEBHOOK_SECRETS, GATEWAY_ADMIN_KEY_HASH: `sha256:${printed}` });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("admin.apiKeyHashes.0");
  });

  it("--help prints usage, not a hash", async () => {
    const run = await gateway(["hash-key", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("USAGE gateway hash-key");
    expect(run.stdout).not.toContain("sha256:0");
  });

  it.each([["--x"], ["-k"], ["--key=abc"]])("refuses the flag %s (exit 64, no hash)", async (flag) => {
    const run = await gateway(["hash-key", flag]);
    expect(run.code).toBe(64);
    expect(run.stderr.split("\n")[0]).toBe(`gateway hash-key: unknown option "${flag.split("=")[0]}"`);
    expect(run.stdout).toBe("");
  });

  it("an empty key is refused", async () => {
    const run = await gateway(["hash-key", "-"], { input: "" });
    expect(run.code).toBe(64);
    expect(run.stderr.split("\n")[0]).toBe("gateway hash-key: the key is empty");
    expect(run.stderr).not.toMatch(STACK_LINE);
  });
});
