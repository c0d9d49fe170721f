/**
 * The web console in real Chromium (playwright-core), against a real gateway process: sign-in
 * (and refusal of a wrong key), Live (a webhook appears within 1 s; resume after a dropped
 * connection with no gap and no repeat), the Event view (raw body byte-identical, replay to a
 * destination shows the new attempt), Destinations (pause and resume), Search (external_id,
 * deep link followed in a new page; a content filter and its test panel), Overview and Send a test event. Every view passes axe-core
 * with no serious or critical violation, in light and dark mode, fits 375 px, and is saved as a
 * screenshot under test-artifacts/console/. No request leaves the gateway's origin and the
 * Content-Security-Policy is never violated.
 */
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { launchChromium } from "../helpers/chromium.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import {
  ARTIFACTS,
  type ConsoleGateway,
  saveScreenshot,
  seriousViolations,
  startConsoleGateway,
} from "./console-fixtures.ts";

let gw: ConsoleGateway;
let browser: Browser;
let context: BrowserContext;
const foreignRequests: string[] = [];
const cspViolations: string[] = [];

function watch(page: Page) {
  const origin = new URL(gw.gateway.url);
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.host !== origin.host && url.protocol !== "data:") foreignRequests.push(request.url());
  });
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return page;
}

async function newPage(): Promise<Page> {
  return watch(await context.newPage());
}

async function signIn(page: Page, key: string) {
  await page.fill("#api-key", key);
  await page.click("button[type=submit]");
  await page.waitForSelector("header.top nav", { timeout: 10_000 });
}

/** Posts a signed e-sign webhook; its id and the exact body sent. */
async function postEsign(type: string, externalId = `crm-${crypto.randomUUID()}`) {
  const delivery = await esignDelivery(gw.gateway.secrets.esign, type, {
    edit: (body) => {
      body.external_id = externalId;
    },
  });
  const response = await postWebhook(gw.gateway.url, "esign", delivery);
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as { id: string };
  return { id, body: new TextDecoder().decode(delivery.body), externalId };
}

async function expectAccessible(page: Page, name: string) {
  expect(await seriousViolations(page), `${name} (light)`).toEqual([]);
  await saveScreenshot(page, name);
  await page.emulateMedia({ colorScheme: "dark" });
  expect(await seriousViolations(page), `${name} (dark)`).toEqual([]);
  await saveScreenshot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: "light" });
}

beforeAll(async () => {
  [gw, browser] = await Promise.all([startConsoleGateway(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe("web console", () => {
  let page: Page;
  let first: Awaited<ReturnType<typeof postEsign>>;

  test("a wrong key is refused with a clear message and nothing is kept", async () => {
    page = await newPage();
    const answer = await page.goto(`${gw.gateway.url}/console`);
    expect(answer?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.fill("#api-key", "not-the-admin-key");
    await page.click("button[type=submit]");
    const alert = await page.waitForSelector("[role=alert]");
    expect(await alert.textContent()).toContain("This key was refused");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await expectAccessible(page, "sign-in");
  });

  test("signs in and shows a webhook in Live within 1 s of its acknowledgement", async () => {
    await signIn(page, gw.gateway.secrets.adminKey);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([gw.gateway.secrets.adminKey]);
    await page.click("nav >> text=Live");
    // The page's start-up is not timed: the view shows "Connected" once the gateway's `ready`
    // frame says the subscription is attached, so the 1 s below measures delivery alone.
    await page.waitForSelector("[role=status][data-state=live]:has-text('Connected')", { timeout: 10_000 });
    first = await postEsign("agreement.completed");
    await page.waitForSelector(`tr[data-id="${first.id}"]`, { timeout: 1_000 });
    await expectAccessible(page, "live");
  });

  test("Live resumes from its cursor after a dropped connection: no gap, no repeat", async () => {
    const dropped = await newPage();
    const sockets: { close(options?: { code?: number; reason?: string }): Promise<void> }[] = [];
    await dropped.routeWebSocket(/\/ws/, (ws) => {
      const server = ws.connectToServer();
      sockets.push({
        close: async () => {
          await ws.close({ code: 4999, reason: "dropped by the test" });
          await server.close();
        },
      });
    });
    await dropped.goto(`${gw.gateway.url}/console/live?source=esign`);
    await signIn(dropped, gw.gateway.secrets.adminKey);
    await dropped.waitForSelector("[role=status][data-state=live]", { timeout: 10_000 });
    const before = await postEsign("agreement.sent");
    await dropped.waitForSelector(`tr[data-id="${before.id}"]`, { timeout: 10_000 });

    await sockets[0]?.close();
    await dropped.waitForSelector("[role=status][data-state=reconnecting]", { timeout: 10_000 });
    const missed = [await postEsign("agreement.signed"), await postEsign("agreement.completed")];
    await dropped.waitForSelector("[role=status][data-state=live]", { timeout: 15_000 });
    const after = await postEsign("agreement.expired");
    await dropped.waitForSelector(`tr[data-id="${after.id}"]`, { timeout: 10_000 });

    expect(sockets.length).toBe(2);
    const shown = await dropped.$$eval("table.events tbody tr", (rows) =>
      rows.map((r) => (r as HTMLElement).dataset.id),
    );
    expect(shown).toEqual([after.id, missed[1]?.id, missed[0]?.id, before.id]);
    await dropped.close();
  });

  test("the Event view shows the raw body byte-identical to what was sent, with a copy button", async () => {
    await page.click(`tr[data-id="${first.id}"] a`);
    await page.waitForURL(`**/console/events/${first.id}`);
    const raw = await page.waitForSelector("[data-testid=raw-body]");
    expect(await raw.textContent()).toBe(first.body);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: gw.gateway.url });
    await page.click("text=Copy raw body");
    await page.waitForSelector("text=Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(first.body);
    expect(await page.textContent("article.event-detail")).toContain("[redacted]");
  });

  test("replays the event to one destination and shows the new attempt", async () => {
    const attempts = `section[data-destination=crm] tr.attempt`;
    await waitFor("the first delivery to crm", async () => {
      if (gw.receiver.ids().includes(first.id)) return true;
      return false;
    });
    await page.reload();
    await page.waitForSelector(attempts, { timeout: 10_000 });
    expect(await page.$$(attempts)).toHaveLength(1);
    await expectAccessible(page, "event");
    await page.selectOption("form[aria-label='Replay this event'] select", "crm");
    await page.click("form[aria-label='Replay this event'] button[type=submit]");
    await page.waitForFunction((selector) => document.querySelectorAll(selector).length === 2, attempts, {
      timeout: 20_000,
    });
    expect(gw.receiver.ids().filter((id) => id === first.id)).toHaveLength(2);
  });

  test("runs a destination's transform on the event and shows the payload", async () => {
    const form = "form[aria-label='Run a transform on this event']";
    await page.waitForSelector(`${form} option[value='destination:chat']`, { state: "attached" });
    await page.selectOption(`${form} select`, "destination:chat");
    await page.click(`${form} button[type=submit]`);
    const answer = await page.waitForSelector("[data-testid=transform-answer] pre");
    expect(JSON.parse((await answer.textContent()) ?? "{}").text).toBe(`Agreement completed: ${first.externalId}`);
    await expectAccessible(page, "event-transform");
  });

  test("pauses and resumes a destination", async () => {
    const state = async () => {
      const answer = await fetch(`${gw.gateway.url}/destinations`, {
        headers: { authorization: `Bearer ${gw.gateway.secrets.adminKey}` },
      });
      const { destinations } = (await answer.json()) as { destinations: { id: string; state: string }[] };
      return destinations.find((d) => d.id === "crm")?.state;
    };
    await page.click("nav >> text=Destinations");
    await page.click("button[aria-label='Pause crm']");
    await page.waitForSelector("tr[data-destination=crm] .dest-state >> text=paused");
    expect(await state()).toBe("paused");
    await expectAccessible(page, "destinations");
    await page.click("button[aria-label='Resume crm']");
    await page.waitForSelector("tr[data-destination=crm] .dest-state >> text=active");
    expect(await state()).toBe("active");
  });

  test("bulk replay of dead letters confirms how many it will replay, then replays them", async () => {
    const dead = [await postEsign("agreement.cancelled"), await postEsign("agreement.cancelled")];
    await waitFor("two dead letters at archive", async () => {
      const answer = await fetch(`${gw.gateway.url}/destinations/archive/deliveries?state=dead`, {
        headers: { authorization: `Bearer ${gw.gateway.secrets.adminKey}` },
      });
      return ((await answer.json()) as { deliveries: unknown[] }).deliveries.length === 2;
    });
    await page.reload();
    await page.selectOption("select[name=destination]", "archive");
    await page.click("text=Replay dead letters…");
    const dialog = await page.waitForSelector("dialog[open]");
    expect(await dialog.textContent()).toContain("Replay 2 dead letters to archive?");
    await page.click("dialog button.primary");
    await page.waitForSelector("text=Replaying 2 dead letters to archive.");
    await waitFor("the replayed dead letters at archive", () => gw.failing.requests.length === 4);
    expect(gw.failing.ids().sort()).toEqual([...dead.map((d) => d.id), ...dead.map((d) => d.id)].sort());

    await page.selectOption("select[name=destination]", "crm");
    await page.click("text=Replay dead letters…");
    expect(await (await page.waitForSelector("dialog[open]")).textContent()).toContain("no dead letters for crm");
    await page.click("dialog >> text=Cancel");
    await page.waitForSelector("dialog[open]", { state: "detached" });
  });

  test("searches by external_id and the deep link opens the same event in a new page", async () => {
    const target = await postEsign("agreement.declined", `deal-${crypto.randomUUID()}`);
    await postEsign("agreement.declined");
    await page.click("nav >> text=Search");
    await page.fill("input[name=external_id]", target.externalId);
    await page.click("form[aria-label='Event log filters'] button[type=submit]");
    // The view shows only results of the filters in its URL (never the unfiltered list's rows).
    await page.waitForURL((url) => url.searchParams.get("external_id") === target.externalId);
    await page.waitForSelector(`tr[data-id="${target.id}"]`);
    expect(await page.$$("table.events tbody tr")).toHaveLength(1);
    await page.click(`tr[data-id="${target.id}"] a`);
    await page.waitForSelector(`article.event-detail[data-id="${target.id}"]`);
    const deepLink = page.url();
    expect(new URL(deepLink).searchParams.get("external_id")).toBe(target.externalId);
    expect(new URL(deepLink).searchParams.get("event")).toBe(target.id);
    await expectAccessible(page, "search");
    expect(await page.inputValue("select[name=limit]")).toBe("50");
    await page.screenshot({ path: join(ARTIFACTS, "readme.png") });

    // A new tab has its own sessionStorage: it asks for the key, then shows the linked state.
    const other = await newPage();
    await other.goto(deepLink);
    await signIn(other, gw.gateway.secrets.adminKey);
    await other.waitForSelector(`article.event-detail[data-id="${target.id}"] [data-testid=raw-body]`);
    expect(await other.inputValue("input[name=external_id]")).toBe(target.externalId);
    expect(await other.textContent("[data-testid=raw-body]")).toBe(target.body);
    await other.close();
  });

  test("Search takes a content filter, and the test panel counts its matches among recent events", async () => {
    const prefix = `filter-${crypto.randomUUID()}`;
    const a = await postEsign("agreement.completed", `${prefix}-a`);
    const b = await postEsign("agreement.declined", `${prefix}-b`);
    await postEsign("agreement.declined");
    await page.click("nav >> text=Search");
    await page.fill("input[name=external_id]", "");
    await page.fill("input[name=filter]", JSON.stringify({ data: { external_id: { $startsWith: prefix } } }));
    await page.click("text=Test against the last 100 events");
    const result = await page.waitForSelector(".filter-test-result");
    expect(await result.textContent()).toMatch(/^2 of the last \d+ events match$/);
    expect(await page.$$eval(".filter-test-matches a", (links) => links.map((l) => l.textContent))).toEqual([
      b.id,
      a.id,
    ]);

    await page.click("form[aria-label='Event log filters'] button[type=submit]");
    await page.waitForURL((url) => (url.searchParams.get("filter") ?? "").includes(prefix));
    await page.waitForSelector(`tr[data-id="${a.id}"]`);
    expect(await page.$$eval("table.events tbody tr", (rows) => rows.map((r) => r.getAttribute("data-id")))).toEqual([
      b.id,
      a.id,
    ]);

    await page.fill("input[name=filter]", '{"data":{"amount":{"$gtx":1}}}');
    await page.click("text=Test against the last 100 events");
    const alert = await page.waitForSelector(".filter-test [role=alert]");
    expect(await alert.textContent()).toContain("filter.data.amount.$gtx");
    await expectAccessible(page, "search-filter");
  });

  test("the Overview charts the last hour per source and type", async () => {
    await page.click("nav >> text=Overview");
    const total = await page.waitForSelector("[data-total]");
    expect(Number(await total.getAttribute("data-total"))).toBeGreaterThanOrEqual(6);
    const bySource = await page.getAttribute("figure:has-text('Events per source') svg", "aria-label");
    expect(bySource).toMatch(/esign: \d+/);
    await expectAccessible(page, "overview");
  });

  test("sends a test event of a documented type through the gateway's own verification", async () => {
    await page.click("nav >> text=Send test event");
    await page.selectOption("select[name=source]", "staffing");
    await page.selectOption("select[name=type]", "candidate.accepted");
    await page.click("button[type=submit]");
    const link = await page.waitForSelector("ul.sent li a");
    const id = (await link.textContent()) ?? "";
    expect(await page.textContent("ul.sent li")).toContain("candidate.accepted: 202");
    const answer = await fetch(`${gw.gateway.url}/events/${id}`, {
      headers: { authorization: `Bearer ${gw.gateway.secrets.adminKey}` },
    });
    const detail = (await answer.json()) as { source_id: string; event: { type: string } };
    expect(detail).toMatchObject({ source_id: "staffing", event: { type: "candidate.accepted" } });
    await expectAccessible(page, "send-test-event");
  });

  test("every view fits a 375 px wide screen", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    const views = { overview: "", live: "/live", search: "/search", event: `/events/${first.id}` };
    for (const [name, path] of Object.entries({ ...views, destinations: "/destinations", send: "/send" })) {
      await page.goto(`${gw.gateway.url}/console${path}`);
      await page.waitForSelector("main h1");
      await page.waitForLoadState("networkidle");
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `horizontal overflow at ${path || "/"}`).toBeLessThanOrEqual(0);
      await saveScreenshot(page, `${name}-375px`);
    }
  });

  test("is keyboard-usable: skip link first, views reached and confirmations closed by keys", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${gw.gateway.url}/console`);
    await page.waitForSelector("main h1");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    const focusedText = () => page.evaluate(() => document.activeElement?.textContent?.trim());
    for (let i = 0; i < 8 && (await focusedText()) !== "Destinations"; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.waitForSelector("main h1:text('Destinations')");
    await page.focus("text=Replay dead letters…");
    await page.keyboard.press("Enter");
    await page.waitForSelector("dialog[open]");
    await page.keyboard.press("Escape");
    await page.waitForSelector("dialog[open]", { state: "detached" });
  });

  test("the accessibility check is not vacuous: axe reports an unlabelled control", async () => {
    const probe = await context.newPage();
    await probe.setContent('<!doctype html><html lang="en"><title>t</title><main><input type="text"></main></html>');
    expect((await seriousViolations(probe)).map((v) => v.id)).toContain("label");
    await probe.close();
  });

  test("no request left the gateway's origin and the CSP was never violated", () => {
    expect(foreignRequests).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
