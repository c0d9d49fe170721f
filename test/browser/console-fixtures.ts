/**
 * Fixtures of the web console's browser tests: a real gateway process whose routes send every
 * event to the live stream and to an HTTP destination (a loopback receiver), with test events
 * enabled; axe-core injected into a page (no serious or critical violations allowed); and a
 * screenshot of each view under `test-artifacts/console/` (gitignored).
 */
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../delivery/helpers/webhook-receiver.ts";
import { type GatewayProcess, makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

export const ARTIFACTS = new URL("../../test-artifacts/console/", import.meta.url).pathname;

export interface ConsoleGateway {
  gateway: GatewayProcess;
  receiver: WebhookReceiver;
  /** Answers 500 to everything: its deliveries (no retries) become dead letters at once. */
  failing: WebhookReceiver;
  close(): Promise<void>;
}

/**
 * A gateway process with the live stream, an HTTP destination `crm` that receives everything, a
 * destination `archive` (no retries, always failing) for `agreement.cancelled`, and test events.
 */
export async function startConsoleGateway(): Promise<ConsoleGateway> {
  const receiver = await startWebhookReceiver();
  const failing = await startWebhookReceiver(() => ({ status: 500 }));
  const secrets = makeSecrets();
  const dataDir = await mkdtemp(join(tmpdir(), "gw-console-"));
  const hash = adminKeyHash(secrets.adminKey);
  const gateway = await startGatewayProcess({
    secrets,
    dataDir,
    env: { TEST_WHSEC: makeWhsecSecret() },
    config: {
      server: { host: "127.0.0.1", port: 0 },
      store: { driver: "disk", dir: dataDir },
      sources: [
        { id: "esign", service: "esign", secrets: ["${TEST_ESIGN_SECRET}"] },
        { id: "staffing", service: "staffing", secrets: ["${TEST_STAFFING_SECRET}"] },
      ],
      admin: { apiKeyHashes: [hash] },
      clients: [{ id: "console", apiKeyHashes: [hash], scopes: { stream: {} } }],
      destinations: [
        { id: "live", type: "stream" },
        { id: "crm", type: "http", url: receiver.url, secrets: ["${TEST_WHSEC}"], allowCidrs: ["127.0.0.1/32"] },
        {
          id: "archive",
          type: "http",
          url: failing.url,
          secrets: ["${TEST_WHSEC}"],
          allowCidrs: ["127.0.0.1/32"],
          retry: { schedule: [] },
        },
        // No route sends here: the Event view runs its transform on recorded events (docs/transformations.md).
        {
          id: "chat",
          type: "http",
          url: receiver.url,
          secrets: ["${TEST_WHSEC}"],
          allowCidrs: ["127.0.0.1/32"],
          transform: { builtin: "slack" },
        },
      ],
      routes: [
        { id: "all", types: ["*"], destinations: ["live", "crm"] },
        { id: "cancelled", types: ["agreement.cancelled"], destinations: ["archive"] },
      ],
      testEvents: true,
      log: { level: "warn" },
    },
  });
  return {
    gateway,
    receiver,
    failing,
    async close() {
      await gateway.kill();
      await receiver.close();
      await failing.close();
    },
  };
}

const axeSource = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core in the page; the serious and critical violations (empty when accessible). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, so the page's CSP (script-src 'self') does not apply.
  await page.evaluate(await axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: Document): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run(document)).violations as {
      id: string;
      impact: string | null;
      help: string;
      nodes: { target: string[] }[];
    }[];
  });
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }));
}

/** Saves a full-page screenshot of the view as `test-artifacts/console/<name>.png`. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
