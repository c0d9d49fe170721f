/**
 * The live stream in a real browser: Debian's Chromium (via playwright-core) opens a page served
 * by this test on its own loopback port; the page connects to the gateway's `/ws` with
 * `?token=` (a token minted by `POST /auth/stream-token`, the way a backend hands one to a
 * browser) and lists the events as they arrive. The test asserts the page shows the ids of the
 * webhooks it posted, in order.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { launchChromium } from "../helpers/chromium.ts";
import { type StreamGateway, startStreamGateway } from "../stream/stream-fixtures.ts";

function pageHtml(wsUrl: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Live events</title></head>
<body>
  <p id="status">connecting</p>
  <ol id="events"></ol>
  <script type="module">
    const status = document.getElementById("status");
    const list = document.getElementById("events");
    const socket = new WebSocket(${JSON.stringify(wsUrl)});
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (frame.type === "ready") status.textContent = "ready";
      if (frame.type === "event") {
        const item = document.createElement("li");
        item.dataset.id = frame.event.id;
        item.dataset.cursor = frame.cursor;
        item.textContent = frame.event.type + " " + frame.event.id;
        list.append(item);
      }
    };
    socket.onclose = (event) => { status.textContent = "closed " + event.code; };
  </script>
</body></html>`;
}

let gw: StreamGateway;
let browser: Browser;
let pageServer: http.Server;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startStreamGateway(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  pageServer?.close();
  await gw?.kill();
});

test("a page in Chromium connects to /ws with ?token= and shows the events as they arrive", async () => {
  const minted = await fetch(`${gw.url}/auth/stream-token`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.keys.agreements}`, "content-type": "application/json" },
    body: JSON.stringify({ type: "agreement.*", ttlSeconds: 120 }),
  });
  expect(minted.status).toBe(201);
  const { token } = (await minted.json()) as { token: string };

  const html = pageHtml(gw.wsUrl({ token }));
  pageServer = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(html);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
  const pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;

  const page = await browser.newPage();
  await page.goto(pageUrl);
  await page.waitForFunction(() => document.getElementById("status")?.textContent === "ready", null, {
    timeout: 15_000,
  });

  const posted = [
    await gw.postEsign("agreement.sent"),
    await gw.postEsign("agreement.signed"),
    await gw.postEsign("agreement.completed"),
  ];
  // Outside the token's filter: never shown.
  await gw.postStaffing("candidate.accepted");
  await page.waitForFunction((count) => document.querySelectorAll("#events li").length >= count, posted.length, {
    timeout: 15_000,
  });
  const shown = await page.$$eval("#events li", (items) => items.map((item) => (item as HTMLElement).dataset.id));
  expect(shown).toEqual(posted);
  expect(await page.textContent("#status")).toBe("ready");
  await page.close();
});
