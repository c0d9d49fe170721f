/**
 * The gateway-process helper kills the gateways a test process started when that process exits
 * without stopping them, so an abandoned gateway never outlives its test run (one was found
 * re-parented to PID 1, holding its port and data dir, after a timed-out `beforeAll`).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

const FIXTURE = new URL("./fixtures/start-and-abandon-gateway.ts", import.meta.url).pathname;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves when `pid` no longer exists, or with false after `ms`. */
async function gone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !alive(pid);
}

describe("gateway-process helper", () => {
  it("kills a gateway its test process abandoned when that process exits", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(0);
    const pid = Number(out.trim());
    expect(Number.isInteger(pid) && pid > 0).toBe(true);
    // SIGKILL was sent in the fixture's exit handler; the kernel reaps the gateway once its
    // parent (gone) hands it to init, which takes a moment: wait for that, bounded.
    const wasGone = await gone(pid, 10_000);
    if (!wasGone) process.kill(pid, "SIGKILL");
    expect(wasGone).toBe(true);
  }, 60_000);
});
