/**
 * The web console on a phone and without noise (issue 19), in real Chromium against real gateway
 * processes, in light and dark: every view (sign-in, Live, Search, Event, Destinations, Overview,
 * Send test event) at 375 px has no horizontal overflow and keeps its key fields inside the
 * viewport, passes axe-core, and is saved as a screenshot at 375 and 1280 px under
 * `test-artifacts/console/phone/`; the browser logs no error and the page throws none on any view.
 * Three gateways: the console fixture (events, destinations, test events, no stream tokens: the
 * Live view must not ask for one), an empty one (stream tokens on, nothing configured: the empty
 * states say what to do), and the zero-config `gateway serve` (development key offered).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BIN, cleanEnv, scratchDir } from "../cli/cli-fixtures.ts";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { type GatewayProcess, makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { ARTIFACTS, type ConsoleGateway, seriousViolations, startConsoleGateway } from "./console-fixtures.ts";

const PHONE = { width: 375, height: 800 };
const DESKTOP = { width: 1280, height: 900 };
const SHOTS = join(ARTIFACTS, "phone");
const SCHEMES = ["light", "dark"] as const;

let full: ConsoleGateway;
let empty: GatewayProcess;
let browser: Browser;
let zeroConfig: { url: string; child: ChildProcess } | undefined;

/** A gateway with nothing configured but its sources, and stream tokens on. */
async function startEmptyGateway(): Promise<GatewayProcess> {
  const secrets = makeSecrets();
  const hash = adminKeyHash(secrets.adminKey);
  return startGatewayProcess({
    secrets,
    env: { TEST_JWT_SECRET: "jwt_secret_0123456789abcdef0123456789abcdef" },
    config: {
      server: { host: "127.0.0.1", port: 0 },
      store: { driver: "memory" },
      sources: [
        { id: "esign", service: "esign", secrets: ["${TEST_ESIGN_SECRET}"] },
        { id: "staffing", service: "staffing", secrets: ["${TEST_STAFFING_SECRET}"] },
      ],
      admin: { apiKeyHashes: [hash] },
      clients: [{ id: "console", apiKeyHashes: [hash], scopes: { stream: {} } }],
      auth: { jwt: { hs256Secret: "${TEST_JWT_SECRET}" } },
      destinations: [{ id: "live", type: "stream" }],
      routes: [{ id: "all", types: ["*"], destinations: ["live"] }],
      log: { level: "warn" },
    },
  });
}

beforeAll(async () => {
  [full, empty, browser] = await Promise.all([startConsoleGateway(), startEmptyGateway(), launchChromium()]);
  await mkdir(SHOTS, { recursive: true });
});
/** `gateway serve` with no configuration (emulators off) in a fresh directory; resolves with its URL. */
async function startZeroConfig() {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
    cwd: await scratchDir(),
    env: cleanEnv({ GATEWAY_EMULATORS: "off" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      lines.push(line);
      if (line.includes('"msg":"listening"')) resolve(JSON.parse(line).url);
    };
    createInterface({ input: child.stdout }).on("line", onLine);
    createInterface({ input: child.stderr }).on("line", onLine);
    child.once("exit", (code) => reject(new Error(`gateway exited (${code}):\n${lines.join("\n")}`)));
  });
  return { url, child };
}

afterAll(async () => {
  if (zeroConfig && zeroConfig.child.exitCode === null) {
    const exited = new Promise((resolve) => zeroConfig?.child.once("exit", resolve));
    zeroConfig.child.kill("SIGTERM");
    await exited;
  }
  await browser?.close();
  await full?.close();
  await empty?.kill();
});

/** A page of a fresh tab in `scheme` that records every console error, page error and request. */
async function openPage(scheme: (typeof SCHEMES)[number]) {
  const context = await browser.newContext({ viewport: PHONE, colorScheme: scheme });
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: { url: string; status?: number }[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`${page.url()}: ${error.message}`));
  page.on("response", (response) => requests.push({ url: response.url(), status: response.status() }));
  return { page, errors, requests, close: () => context.close() };
}

/** No sideways scrolling, and every visible element of the view (key fields first) inside the viewport. */
async function expectFitsPhone(page: Page, view: string, keyFields: string[]) {
  const layout = await page.evaluate((selectors) => {
    const width = window.innerWidth;
    const outside = (element: Element) => {
      const box = element.getBoundingClientRect();
      return box.width > 0 && box.height > 0 && (box.left < -0.5 || box.right > width + 0.5);
    };
    const describe = (element: Element) =>
      `${element.tagName.toLowerCase()}.${element.className} "${(element.textContent ?? "").slice(0, 30)}"`;
    return {
      scrollWidth: document.scrollingElement?.scrollWidth ?? 0,
      width,
      missing: selectors.filter((s) => document.querySelectorAll(s).length === 0),
      keyOutside: selectors.flatMap((s) => [...document.querySelectorAll(s)].filter(outside).map(describe)),
      anyOutside: [...document.querySelectorAll("main *")]
        .filter((element) => !element.closest("thead") && outside(element))
        .map(describe),
    };
  }, keyFields);
  expect(layout.missing, `${view}: key fields present`).toEqual([]);
  expect(layout.scrollWidth, `${view}: horizontal overflow`).toBeLessThanOrEqual(layout.width);
  expect(layout.keyOutside, `${view}: key fields outside the viewport`).toEqual([]);
  expect(layout.anyOutside, `${view}: elements outside the viewport`).toEqual([]);
}

/** Checks the view at 375 px (fit, axe) and saves it at 375 and 1280 px. */
async function checkView(page: Page, name: string, keyFields: string[]) {
  await page.setViewportSize(PHONE);
  await expectFitsPhone(page, name, keyFields);
  expect(await seriousViolations(page), `${name}: axe`).toEqual([]);
  await page.screenshot({ path: join(SHOTS, `${name}-375.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(SHOTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize(PHONE);
}

async function signIn(page: Page, key: string) {
  await page.fill("#api-key", key);
  await page.click("button[type=submit]");
  await page.waitForSelector("header.top nav");
}

/** Opens a console path (a full page load) and waits for its heading and quiet network. */
async function open(page: Page, base: string, path: string) {
  await page.goto(`${base}/console${path}`);
  await page.waitForSelector("main h1");
  await page.waitForLoadState("networkidle");
}

async function postEsign(gateway: GatewayProcess, type: string) {
  const delivery = await esignDelivery(gateway.secrets.esign, type, {
    edit: (body) => {
      body.external_id = `crm-${crypto.randomUUID()}`;
    },
  });
  const response = await postWebhook(gateway.url, "esign", delivery);
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

const EVENT_FIELDS = ["table.events tbody tr .ev-type", "table.events tbody tr .ev-id a", ".ev-subject", ".ev-time"];

describe.each(SCHEMES)("console at 375 px, %s", (scheme) => {
  test("a configured gateway: every view fits, no console error, no stream-token request", async () => {
    const gw = full.gateway;
    const { page, errors, requests, close } = await openPage(scheme);
    try {
      await open(page, gw.url, "");
      await checkView(page, `sign-in-${scheme}`, ["#api-key", "button[type=submit]"]);
      await signIn(page, gw.secrets.adminKey);

      await open(page, gw.url, "/live");
      await page.waitForSelector("[role=status][data-state=live]");
      const id = await postEsign(gw, "agreement.completed");
      await page.waitForSelector(`tr[data-id="${id}"]`);
      await checkView(page, `live-${scheme}`, EVENT_FIELDS);

      await open(page, gw.url, "/search");
      await page.waitForSelector(`tr[data-id="${id}"]`);
      await checkView(page, `search-${scheme}`, EVENT_FIELDS);

      await open(page, gw.url, "/search?external_id=no-such-deal");
      await page.waitForSelector("[data-empty=search]");
      expect(await page.textContent("[data-empty=search]")).toContain("No events match these filters");

      await waitFor("the delivery to crm", () => full.receiver.ids().includes(id));
      await open(page, gw.url, `/events/${id}`);
      await page.waitForSelector("section[data-destination=crm] tr.attempt");
      await checkView(page, `event-${scheme}`, [
        "[data-testid=raw-body]",
        "section[data-destination=crm] tr.attempt td",
        ".facts dd",
      ]);

      await open(page, gw.url, "/destinations");
      await page.waitForSelector("tr[data-destination=crm]");
      await checkView(page, `destinations-${scheme}`, [
        "tr[data-destination=crm] th",
        "tr[data-destination=crm] .dest-state",
        "button[aria-label='Pause crm']",
      ]);

      await open(page, gw.url, "");
      await page.waitForSelector("[data-total]");
      await checkView(page, `overview-${scheme}`, ["[data-total]", "figure.chart"]);

      await open(page, gw.url, "/send");
      await page.waitForSelector("select[name=type] option", { state: "attached" });
      await checkView(page, `send-test-event-${scheme}`, ["select[name=source]", "select[name=type]", "form button"]);

      expect(errors).toEqual([]);
      // No JWT secret here: the Live view uses the key, and never asks for a token it cannot get.
      expect(requests.filter((r) => r.url.includes("/auth/stream-token"))).toEqual([]);
      expect(requests.filter((r) => (r.status ?? 0) >= 400)).toEqual([]);
    } finally {
      await close();
    }
  });

  test("an empty gateway: empty states say what to do, no console error, a stream token is used", async () => {
    const { page, errors, requests, close } = await openPage(scheme);
    try {
      await open(page, empty.url, "");
      await signIn(page, empty.secrets.adminKey);
      expect(await page.$("nav >> text=Send test event")).toBeNull();

      await open(page, empty.url, "/live");
      await page.waitForSelector("[role=status][data-state=live]");
      const live = await page.textContent("[data-empty=events]");
      expect(live).toContain("No events yet");
      expect(live).toContain("npm run gateway -- trigger <source> <event type>");
      await checkView(page, `empty-live-${scheme}`, ["[data-empty=events]"]);

      await open(page, empty.url, "/search");
      expect(await page.textContent("[data-empty=events]")).toContain("the event log is empty");
      await checkView(page, `empty-search-${scheme}`, ["[data-empty=events]"]);

      await open(page, empty.url, "/destinations");
      const destinations = await page.textContent("[data-empty=destinations]");
      expect(destinations).toContain("No destinations are configured");
      expect(destinations).toContain("destinations");
      expect(destinations).toContain("routes");
      await checkView(page, `empty-destinations-${scheme}`, ["[data-empty=destinations]"]);

      await open(page, empty.url, "");
      await page.waitForSelector("[data-total='0']");
      expect(await page.textContent("[data-empty=events]")).toContain("No events in the last hour");
      await checkView(page, `empty-overview-${scheme}`, ["[data-empty=events]"]);

      await open(page, empty.url, "/send");
      expect(await page.textContent("[data-empty=test-events]")).toContain('"testEvents": true');
      await checkView(page, `empty-send-test-event-${scheme}`, ["[data-empty=test-events]"]);

      expect(errors).toEqual([]);
      const minted = requests.filter((r) => r.url.endsWith("/auth/stream-token"));
      expect(minted.map((r) => r.status)).toEqual([201]);
      expect(requests.filter((r) => (r.status ?? 0) >= 400)).toEqual([]);
    } finally {
      await close();
    }
  });
});

test("the zero-config gateway: development key, Live, a test event, Search; no console error", async () => {
  zeroConfig = await startZeroConfig();
  const { page, errors, requests, close } = await openPage("dark");
  try {
    await open(page, zeroConfig.url, "");
    await page.click("text=Sign in with the development key");
    await page.waitForSelector("header.top nav");
    await open(page, zeroConfig.url, "/live");
    await page.waitForSelector("[role=status][data-state=live]");
    await page.waitForSelector("[data-empty=events] >> text=Send a test event");
    await checkView(page, "zero-config-live-dark", ["[data-empty=events]"]);
    await page.click("[data-empty=events] >> text=Send a test event");
    await page.waitForSelector("select[name=type] option", { state: "attached" });
    await page.click("form button[type=submit]");
    const id = await (await page.waitForSelector("ul.sent li a")).textContent();
    await open(page, zeroConfig.url, "/search");
    await page.waitForSelector(`tr[data-id="${id}"]`);
    await checkView(page, "zero-config-search-dark", EVENT_FIELDS);
    expect(errors).toEqual([]);
    expect(requests.filter((r) => r.url.includes("/auth/stream-token"))).toEqual([]);
    expect(requests.filter((r) => (r.status ?? 0) >= 400)).toEqual([]);
  } finally {
    await close();
  }
});

test("the console collects errors at all: a failing request is seen (the checks above are not vacuous)", async () => {
  const { page, errors, close } = await openPage("light");
  try {
    await page.goto(`${empty.url}/console`);
    await page.evaluate(() => fetch("/auth/nothing-here").catch(() => undefined));
    await waitFor("the logged 404", () => errors.some((e) => e.includes("404")));
  } finally {
    await close();
  }
});
