/**
 * The gateway's environment switches (docs/configuration.md): a value that is not one the docs
 * list stops `gateway serve` before anything opens, with exit 1 and one line naming the variable,
 * no stack trace and nothing listening.
 */
import { describe, expect, it } from "vitest";
import { closedPort, gateway, STACK_LINE, scratchDir } from "./cli-fixtures.ts";
import { isListening, productionConfig, productionEnv, writeConfig } from "./operator-fixtures.ts";

const BAD: [variable: string, value: string, message: string][] = [
  ["GATEWAY_HTTP_SEND_THREAD", "yes", "GATEWAY_HTTP_SEND_THREAD: expected on or off, received yes"],
  ["GATEWAY_WEBHOOK_FAST_PATH", "maybe", "GATEWAY_WEBHOOK_FAST_PATH: expected on or off, received maybe"],
  ["GATEWAY_DELIVERY_POLL_MS", "abc", "GATEWAY_DELIVERY_POLL_MS: expected whole milliseconds from 10 to 86400000"],
  [
    "GATEWAY_DELIVERY_TRACE",
    "/proc/x/trace.jsonl",
    "GATEWAY_DELIVERY_TRACE: cannot write /proc/x/trace.jsonl (ENOENT)",
  ],
];

describe("environment switches", () => {
  it.each(BAD)("%s=%s stops start-up in one line", { timeout: 240_000 }, async (variable, value, message) => {
    const cwd = await scratchDir();
    const port = await closedPort();
    const file = await writeConfig(cwd, productionConfig(port));
    const run = await gateway(["serve", "--config", file], { cwd, env: { ...productionEnv(), [variable]: value } });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(STACK_LINE);
    expect(run.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining(`gateway serve: ${message}`)]);
    expect(run.stdout).not.toContain('"msg":"listening"');
    expect(await isListening(port)).toBe(false);
  });
});
