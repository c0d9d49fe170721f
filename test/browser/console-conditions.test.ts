/**
 * The console's banner of active conditions, in real Chromium against a real gateway process:
 * a destination that fails every attempt becomes `gateway.destination.failing`, and every view
 * shows it at the top (with a link to Destinations), at 375 px without overflow, axe clean and
 * with no browser-console error; once the destination recovers the banner goes away.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { type GatewayProcess, makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { seriousViolations } from "./console-fixtures.ts";

let browser: Browser;
let gateway: GatewayProcess;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver(() => ({ status: 503 }));
  const secrets = makeSecrets();
  gateway = await startGatewayProcess({
    secrets,
    config: {
      server: { host: "127.0.0.1", port: 0 },
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "esign", secrets: ["${TEST_ESIGN_SECRET}"] }],
      admin: { apiKeyHashes: [adminKeyHash(secrets.adminKey)] },
      destinations: [
        {
          id: "crm",
          type: "http",
          url: receiver.url,
          secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
          allowCidrs: ["127.0.0.1/32"],
          retry: { schedule: [0.05], jitter: 0 },
          breaker: { failures: 1000 },
        },
      ],
      routes: [{ sources: ["esign"], destinations: ["crm"] }],
      operationalEvents: { failing: { minAttempts: 2, recoverAfterSuccesses: 1 } },
      log: { level: "warn" },
    },
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await gateway?.kill();
  await receiver?.close();
});

test("shows a failing destination on every view, and clears once it recovers", async () => {
  expect((await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign))).status).toBe(202);
  const conditions = async () =>
    (
      (await (
        await fetch(`${gateway.url}/conditions`, { headers: { authorization: `Bearer ${gateway.secrets.adminKey}` } })
      ).json()) as { conditions: { type: string }[] }
    ).conditions;
  await waitFor("the destination to be failing", async () => (await conditions()).length > 0);

  const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${gateway.url}/console`);
  await page.fill("#api-key", gateway.secrets.adminKey);
  await page.click("button[type=submit]");
  // Signed in once the shell shows (the key is kept only after the gateway accepted it).
  await page.waitForSelector("header.top nav");
  for (const path of ["", "/live", "/search", "/destinations"]) {
    await page.goto(`${gateway.url}/console${path}`);
    const banner = page.locator("section.conditions");
    await banner.waitFor();
    expect(await banner.textContent()).toContain("Destination crm is failing");
    expect(await banner.locator("a").getAttribute("href")).toContain("destinations");
    const width = await page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0);
    expect(width).toBeLessThanOrEqual(375);
    expect(await seriousViolations(page)).toEqual([]);
  }

  // The destination comes back: the next delivery succeeds and the condition ends.
  receiver.respond(() => ({ status: 200 }));
  expect((await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign))).status).toBe(202);
  await waitFor("the destination to recover", async () => (await conditions()).length === 0);
  await page.goto(`${gateway.url}/console/destinations`);
  await page.waitForSelector("main h1");
  await page.waitForLoadState("networkidle");
  expect(await page.locator("section.conditions").count()).toBe(0);
  expect(errors).toEqual([]);
  await context.close();
});
