/**
 * The zero-config development start (`gateway serve` with no configuration and no secrets in the
 * environment, adapters/node/serve-command.ts): the banner names the console, the console is offered the
 * generated admin key (the one kept in `.data/dev-secrets.json`) and test events are on. With the
 * secrets provided by the environment, neither happens.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, expect, test } from "vitest";
import { launchChromium } from "../helpers/chromium.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
});

/** Starts `gateway serve` with the default config in a fresh working directory. */
async function startZeroConfig(env: Record<string, string> = {}) {
  const cwd = await mkdtemp(join(tmpdir(), "gw-zero-config-"));
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(ESIGN|STAFFING|GATEWAY)_/.test(name)),
  );
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
    cwd,
    env: { ...clean, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      lines.push(line);
      const match = /console: (http:\/\/\S+)\/console$/.exec(line.trim());
      if (match?.[1]) resolve(match[1]);
      if (line.includes('"msg":"listening"') && Object.keys(env).length > 0) resolve(JSON.parse(line).url);
    };
    createInterface({ input: child.stdout! }).on("line", onLine);
    createInterface({ input: child.stderr! }).on("line", onLine);
    child.once("exit", (code) => reject(new Error(`gateway exited (${code}):\n${lines.join("\n")}`)));
  });
  return { url, cwd };
}

test("zero-config development: the console is offered the generated key, test events are on", async () => {
  const { url, cwd } = await startZeroConfig();
  const secrets = JSON.parse(await readFile(join(cwd, ".data", "dev-secrets.json"), "utf8")) as {
    GATEWAY_ADMIN_KEY: string;
  };
  const offered = await fetch(`${url}/console/dev-key`);
  expect(offered.status).toBe(200);
  expect(await offered.json()).toEqual({ key: secrets.GATEWAY_ADMIN_KEY, development: true });
  const sent = await fetch(`${url}/sources/esign/test-events`, {
    method: "POST",
    headers: { authorization: `Bearer ${secrets.GATEWAY_ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ type: "agreement.completed" }),
  });
  expect(sent.status).toBe(202);

  // In a real browser: the sign-in page offers the key and signing in with it works.
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${url}/console`);
    await page.click("text=Sign in with the development key");
    await page.waitForSelector("header.top nav >> text=Send test event");
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([secrets.GATEWAY_ADMIN_KEY]);
  } finally {
    await browser.close();
  }
});

test("with the secrets from the environment, no key is offered and test events are off", async () => {
  const key = "admin_key_from_the_environment_0123456789";
  const { url } = await startZeroConfig({
    ESIGN_WEBHOOK_SECRET: "esign_secret_from_env_0123456789",
    STAFFING_WEBHOOK_SECRET: "staffing_secret_from_env_0123456789",
    GATEWAY_ADMIN_KEY_HASH: adminKeyHash(key),
  });
  expect((await fetch(`${url}/console/dev-key`)).status).toBe(404);
  const sent = await fetch(`${url}/sources/esign/test-events`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ type: "agreement.completed" }),
  });
  expect(sent.status).toBe(404);
  expect((await fetch(`${url}/console`)).status).toBe(200);
});
