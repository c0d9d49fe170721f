/**
 * The zero-config start with the proxy upstreams in `config/default.ts` and the sandbox switched
 * off (`GATEWAY_EMULATORS=off`; the sandbox itself is adapters/node/sandbox.ts): without the upstream
 * variables the gateway still starts, warns once per unconfigured upstream and keeps the route
 * mounted; with them set, that upstream is configured (no warning) and reaches the upstream.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, expect, test, vi } from "vitest";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { startEsignEmulator } from "../helpers/emulators.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const UPSTREAM_VARS = [
  "ESIGN_API_URL",
  "ESIGN_CLIENT_ID",
  "ESIGN_CLIENT_SECRET",
  "STAFFING_API_URL",
  "STAFFING_API_KEY",
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `gateway serve` with the default config in a fresh working directory. */
async function serveDefault(env: Record<string, string>) {
  const cwd = await mkdtemp(join(tmpdir(), "gw-default-"));
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !UPSTREAM_VARS.includes(name)));
  const child: ChildProcess = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
    cwd,
    env: { ...base, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    await rm(cwd, { recursive: true, force: true });
  });
  const lines: string[] = [];
  const waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.test(line))) waiter.resolve(line);
      if (line.includes('"msg":"listening"')) resolve(JSON.parse(line).url);
    };
    createInterface({ input: child.stdout! }).on("line", onLine);
    createInterface({ input: child.stderr! }).on("line", onLine);
    exited.then((code) => reject(new Error(`gateway exited (${code}):\n${lines.join("\n")}`)));
  });
  /** Resolves with the first line (seen or coming) that passes `test`. */
  const lineMatching = (test: (line: string) => boolean) =>
    new Promise<string>((resolve) => {
      const seen = lines.find(test);
      if (seen) resolve(seen);
      else waiters.push({ test, resolve });
    });
  const warnings = () =>
    lines
      .filter((line) => line.includes("upstream not configured"))
      .map((line) => JSON.parse(line) as { upstream: string; missing: string[] });
  return { url, lineMatching, warnings };
}

/** Both upstream warnings are logged in one tick, so once staffing's is in, esign's would be too. */
const staffingWarning = (line: string) => line.includes("upstream not configured") && line.includes('"staffing"');

test("without upstream variables the default config starts and warns about both upstreams", async () => {
  const { url, warnings, lineMatching } = await serveDefault({ GATEWAY_EMULATORS: "off" });
  await lineMatching(staffingWarning);
  expect(warnings().map((w) => [w.upstream, w.missing])).toEqual([
    ["esign", ["baseUrl", "clientId", "clientSecret"]],
    ["staffing", ["baseUrl", "apiKey"]],
  ]);
  // The route is mounted (the default config has no clients, so calls need credentials first).
  const answer = await fetch(`${url}/api/esign/agreements`);
  expect(answer.status).toBe(401);
  expect((await answer.json()).error.code).toBe("unauthorized");
});

test("with the e-sign variables set, that upstream is configured from the environment", async () => {
  const esign = await startEsignEmulator();
  cleanups.push(() => esign.close());
  const env = {
    ESIGN_API_URL: esign.baseUrl,
    ESIGN_CLIENT_ID: esign.client.clientId,
    ESIGN_CLIENT_SECRET: esign.client.clientSecret,
  };
  const { warnings, lineMatching } = await serveDefault({ ...env, GATEWAY_EMULATORS: "off" });
  await lineMatching(staffingWarning);
  expect(warnings().map((w) => w.upstream)).toEqual(["staffing"]);

  // The same values resolve into a configured upstream (the secret arrives by interpolation only).
  for (const [name, value] of Object.entries(env)) process.env[name] = value;
  try {
    vi.resetModules();
    const { default: raw } = await import("../../config/default.ts");
    expect(raw.upstreams?.[0]).toMatchObject({ clientSecret: "${ESIGN_CLIENT_SECRET}" });
    const config = resolveConfig(raw, {
      ...process.env,
      ESIGN_WEBHOOK_SECRET: "x".repeat(32),
      STAFFING_WEBHOOK_SECRET: "y".repeat(32),
      GATEWAY_ADMIN_KEY_HASH: `sha256:${"0".repeat(64)}`,
    });
    expect(config.upstreams[0]).toMatchObject({
      id: "esign",
      baseUrl: esign.baseUrl,
      clientSecret: esign.client.clientSecret,
    });
  } finally {
    for (const name of Object.keys(env)) delete process.env[name];
  }
});
