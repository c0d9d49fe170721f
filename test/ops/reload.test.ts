/**
 * Reloading the configuration without a restart, as an operator does it: rewrite the file the
 * gateway was started with and send SIGHUP to its PID (docs/configuration.md "Reloading"). A
 * destination added receives the next event (its bytes checked at a real receiver), a removed
 * one gets nothing more, WebSocket and SSE subscribers connected before the reload stay connected
 * and receive events after it, and a keep-alive connection keeps working. An attempt in flight
 * finishes; a changed destination's next delivery waits for it and goes to the new URL. An invalid file and a
 * changed port are refused with one `error` line each while the running configuration keeps
 * serving. Zero-config mode has no file: SIGHUP says so and the gateway keeps running.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Webhook } from "standardwebhooks";
import { afterAll, expect, test } from "vitest";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { startWebhookReceiver, type WebhookReceiver, waitLong } from "../delivery/helpers/webhook-receiver.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { adminGet, adminKeyHash } from "../helpers/signed-requests.ts";
import { openReadyWs, type StreamGateway, startStreamGateway } from "../stream/stream-fixtures.ts";

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
}, 240_000);

/** Resolves with the first output line (from index `from`) containing every one of `parts` (bounded). */
async function waitForLine(gw: Pick<GatewayProcess, "lines">, parts: string[], from = 0): Promise<string> {
  let found: string | undefined;
  await waitLong(
    `a line with ${parts.join(" + ")}`,
    () => {
      found = gw.lines.slice(from).find((line) => parts.every((part) => line.includes(part)));
      return found !== undefined;
    },
    90_000,
  );
  return found as string;
}

/** One GET over `agent`; the answer's status and the local port of the socket it used. */
function getOver(agent: Agent, url: string): Promise<{ status: number; localPort: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent }, (res) => {
      const localPort = res.socket.localPort ?? 0;
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, localPort, reused: req.reusedSocket }));
    });
    req.on("error", reject);
    req.end();
  });
}

const httpDestination = (id: string, receiver: WebhookReceiver) => ({
  id,
  type: "http",
  url: receiver.url,
  secrets: ["${TEST_WHSEC}"],
  allowCidrs: ["127.0.0.1/32"],
});

test("SIGHUP applies a new destination and route; connections stay; bad files and a new port are refused", async () => {
  const whsec = makeWhsecSecret();
  const first = await startWebhookReceiver();
  const second = await startWebhookReceiver();
  cleanup.push(
    () => first.close(),
    () => second.close(),
  );
  let config: Record<string, any> = {};
  const gw: StreamGateway = await startStreamGateway({
    stream: { TEST_WHSEC: whsec },
    edit: (c) => {
      c.log = { level: "info" };
      c.destinations.push(httpDestination("first", first));
      c.routes.push({ sources: ["esign"], destinations: ["first"] });
      config = c;
    },
  });
  cleanup.push(() => gw.kill());
  const pid = gw.child.pid as number;

  // Connected before the reload: a WebSocket subscriber and a keep-alive HTTP connection.
  const ws = await openReadyWs(gw.wsUrl({ token: gw.keys.ui }));
  let closed = false;
  ws.closed.then(() => {
    closed = true;
  });
  // An SSE subscriber read as raw bytes (no EventSource: it would reconnect and hide a drop).
  const sse = await fetch(`${gw.url}/stream?token=${gw.keys.ui}`);
  expect(sse.status).toBe(200);
  const reader = (sse.body as ReadableStream<Uint8Array>).getReader();
  let sseText = "";
  let sseEnded = false;
  const decoder = new TextDecoder();
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      sseText += decoder.decode(value, { stream: true });
    }
  })()
    .catch(() => {})
    .finally(() => {
      sseEnded = true;
    });
  cleanup.push(() => reader.cancel());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  cleanup.push(async () => agent.destroy());
  const before = await getOver(agent, `${gw.url}/healthz`);
  expect(before.status).toBe(200);

  const e1 = await gw.postEsign();
  await waitLong("e1 at the first destination", () => first.ids().includes(e1), 90_000);
  await ws.log.waitFor((f) => f.type === "event" && f.event.id === e1, "e1 on the WebSocket", 90_000);
  await waitLong("e1 on the SSE stream", () => sseText.includes(e1), 90_000);

  // Remove `first`, add `second`, route esign there: rewrite the file, signal the PID.
  const reloaded: Record<string, any> = {
    ...config,
    destinations: [
      ...config.destinations.filter((d: { id: string }) => d.id !== "first"),
      httpDestination("second", second),
    ],
    routes: [
      ...config.routes.filter((r: { destinations: string[] }) => !r.destinations.includes("first")),
      { sources: ["esign"], destinations: ["second"] },
    ],
  };
  let mark = gw.lines.length;
  await writeFile(gw.configPath, JSON.stringify(reloaded));
  process.kill(pid, "SIGHUP");
  const line = JSON.parse(await waitForLine(gw, ['"msg":"configuration reloaded"'], mark));
  expect(line.level).toBe("info");
  expect(line.destinations).toEqual({ added: ["second"], removed: ["first"], changed: [] });
  expect(line.routes.added.length + line.routes.removed.length + line.routes.changed.length).toBeGreaterThan(0);
  expect(gw.lines.slice(mark).join("\n")).not.toContain(whsec);
  expect(gw.lines.slice(mark).filter((l) => l.includes("configuration reloaded"))).toHaveLength(1);

  const e2 = await gw.postEsign();
  await waitLong("e2 at the added destination", () => second.ids().includes(e2), 90_000);
  const delivered = second.requests.find((r) => r.headers["webhook-id"] === e2);
  const verified = new Webhook(whsec).verify(delivered?.raw.toString("utf8") ?? "", delivered?.headers ?? {}) as {
    id: string;
    type: string;
  };
  expect(verified.id).toBe(e2);
  // The routing decision for e2 is durable: one delivery, to `second`; `first` got nothing more.
  const detail = await adminGet(gw.url, `/events/${e2}`, gw.secrets.adminKey);
  expect(detail.body.deliveries.map((d: { destination: string }) => d.destination)).toEqual(["second"]);
  expect(first.ids()).toEqual([e1]);

  // The WebSocket subscriber from before the reload is still there and gets the new event.
  await ws.log.waitFor((f) => f.type === "event" && f.event.id === e2, "e2 on the same WebSocket", 90_000);
  expect(closed).toBe(false);
  // So is the SSE subscriber, on the same response.
  await waitLong("e2 on the same SSE stream", () => sseText.includes(e2), 90_000);
  expect(sseEnded).toBe(false);
  // The keep-alive connection from before the reload still serves, on the same socket.
  const after = await getOver(agent, `${gw.url}/healthz`);
  expect(after).toMatchObject({ status: 200, localPort: before.localPort, reused: true });

  // An invalid file: one error line, the running configuration keeps serving.
  mark = gw.lines.length;
  await writeFile(
    gw.configPath,
    JSON.stringify({ ...reloaded, destinations: [...reloaded.destinations, { id: "broken", type: "http" }] }),
  );
  process.kill(pid, "SIGHUP");
  const invalid = JSON.parse(await waitForLine(gw, ["reload refused: invalid configuration"], mark));
  expect(invalid.level).toBe("error");
  expect(invalid.problems.join("\n")).toContain("destinations.");
  const e3 = await gw.postEsign();
  await waitLong("e3 at the destination of the running config", () => second.ids().includes(e3), 90_000);

  // A new port cannot apply live: refused by name.
  mark = gw.lines.length;
  await writeFile(gw.configPath, JSON.stringify({ ...reloaded, server: { ...reloaded.server, port: 1 } }));
  process.kill(pid, "SIGHUP");
  const fixed = JSON.parse(await waitForLine(gw, ["reload refused: settings that apply only at start"], mark));
  expect(fixed.level).toBe("error");
  expect(fixed.settings).toEqual(["server.port"]);
  const e4 = await gw.postEsign();
  await waitLong("e4 after the refused reload", () => second.ids().includes(e4), 90_000);
  await ws.log.waitFor((f) => f.type === "event" && f.event.id === e4, "e4 on the same WebSocket", 90_000);
  expect(closed).toBe(false);
  expect(gw.child.exitCode).toBe(null);
}, 240_000);

test("a destination removed while its deliveries wait keeps them and says so; adding it back resumes them", async () => {
  const whsec = makeWhsecSecret();
  const flaky = await startWebhookReceiver(() => ({ status: 503 }));
  cleanup.push(() => flaky.close());
  let config: Record<string, any> = {};
  const gw = await startStreamGateway({
    stream: { TEST_WHSEC: whsec },
    edit: (c) => {
      c.log = { level: "info" };
      // One quick retry, then a long wait: the delivery is "failed-retrying" when the file changes.
      c.destinations.push({ ...httpDestination("flaky", flaky), retry: { schedule: [3600] } });
      c.routes.push({ sources: ["esign"], destinations: ["flaky"] });
      config = c;
    },
  });
  cleanup.push(() => gw.kill());
  const pid = gw.child.pid as number;
  const e1 = await gw.postEsign();
  await waitLong("a failed attempt at flaky", () => flaky.ids().includes(e1), 90_000);
  await waitLong("the delivery to wait for its retry", async () => {
    const detail = await adminGet(gw.url, `/events/${e1}`, gw.secrets.adminKey);
    return detail.body.deliveries.some((d: { state: string }) => d.state === "failed-retrying");
  });

  const without = {
    ...config,
    destinations: config.destinations.filter((d: { id: string }) => d.id !== "flaky"),
    routes: config.routes.filter((r: { destinations: string[] }) => !r.destinations.includes("flaky")),
  };
  let mark = gw.lines.length;
  await writeFile(gw.configPath, JSON.stringify(without));
  process.kill(pid, "SIGHUP");
  const line = JSON.parse(await waitForLine(gw, ['"msg":"configuration reloaded'], mark));
  expect(line.level).toBe("warn");
  expect(line.destinations.removed).toEqual(["flaky"]);
  expect(line.keptDeliveries).toEqual({ flaky: 1 });
  const kept = await adminGet(gw.url, `/events/${e1}`, gw.secrets.adminKey);
  expect(kept.body.deliveries.map((d: { state: string }) => d.state)).toEqual(["failed-retrying"]);

  // Back again with a schedule that retries at once, and the receiver now answering 200.
  flaky.respond(() => ({ status: 200 }));
  mark = gw.lines.length;
  await writeFile(
    gw.configPath,
    JSON.stringify({
      ...config,
      destinations: config.destinations.map((d: { id: string }) =>
        d.id === "flaky" ? { ...d, retry: { schedule: [0] } } : d,
      ),
    }),
  );
  process.kill(pid, "SIGHUP");
  await waitForLine(gw, ['"msg":"configuration reloaded"', '"added":["flaky"]'], mark);
  // The kept delivery is due at its old time (an hour away); a replay makes it due now.
  const replay = await fetch(`${gw.url}/events/${e1}/replay`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.secrets.adminKey}` },
  });
  expect(replay.status).toBeLessThan(300);
  await waitLong("the kept delivery delivered after the destination came back", async () => {
    const detail = await adminGet(gw.url, `/events/${e1}`, gw.secrets.adminKey);
    return detail.body.deliveries.some((d: { state: string }) => d.state === "delivered");
  });
}, 240_000);

test("an attempt in flight finishes across a reload that changes its destination; the next goes to the new URL, with a new client", async () => {
  const whsec = makeWhsecSecret();
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const old = await startWebhookReceiver(() => ({ status: 200, after: held }));
  const moved = await startWebhookReceiver();
  cleanup.push(
    () => old.close(),
    () => moved.close(),
  );
  let config: Record<string, any> = {};
  const gw = await startStreamGateway({
    stream: { TEST_WHSEC: whsec },
    edit: (c) => {
      c.log = { level: "info" };
      c.destinations.push({ ...httpDestination("crm", old), ordering: "subject" });
      c.routes.push({ sources: ["esign"], destinations: ["crm"] });
      config = c;
    },
  });
  cleanup.push(() => gw.kill());
  const e1 = await gw.postEsign("agreement.completed", { subjectId: "agr-1" });
  await waitLong("e1's attempt in flight at the old URL", () => old.ids().includes(e1), 90_000);

  // A new URL for the same destination id, and a client that may read the event log.
  const readerKey = `reader_${Date.now()}`;
  const changed = {
    ...config,
    destinations: config.destinations.map((d: { id: string }) => (d.id === "crm" ? { ...d, url: moved.url } : d)),
    clients: [...config.clients, { id: "reader", apiKeyHashes: [adminKeyHash(readerKey)], scopes: { events: true } }],
  };
  expect((await fetch(`${gw.url}/events`, { headers: { authorization: `Bearer ${readerKey}` } })).status).toBe(401);
  const mark = gw.lines.length;
  await writeFile(gw.configPath, JSON.stringify(changed));
  process.kill(gw.child.pid as number, "SIGHUP");
  const line = JSON.parse(await waitForLine(gw, ['"msg":"configuration reloaded"'], mark));
  expect(line.destinations).toEqual({ added: [], removed: [], changed: ["crm"] });
  expect(line.clients).toEqual({ added: ["reader"], removed: [], changed: [] });

  // Same subject: e2 waits for e1 (order), which is still in flight at the old URL.
  const e2 = await gw.postEsign("agreement.completed", { subjectId: "agr-1" });
  await waitLong("e2 routed to crm", async () => {
    const detail = await adminGet(gw.url, `/events/${e2}`, gw.secrets.adminKey);
    return detail.body.deliveries?.length === 1;
  });
  // Routed, yet not attempted: the new lane starts once the old one's attempt has finished.
  expect(moved.ids()).toEqual([]);
  const releasedAt = Date.now();
  release?.();
  await waitLong("e2 at the new URL", () => moved.ids().includes(e2), 90_000);
  expect(moved.requests[0]?.at).toBeGreaterThanOrEqual(releasedAt);
  const first = await adminGet(gw.url, `/events/${e1}`, gw.secrets.adminKey);
  expect(first.body.deliveries).toMatchObject([{ destination: "crm", state: "delivered" }]);
  // e1 went once, to the old URL only; e2 only to the new one.
  expect(old.ids()).toEqual([e1]);
  expect(moved.ids()).toEqual([e2]);
  expect((await fetch(`${gw.url}/events`, { headers: { authorization: `Bearer ${readerKey}` } })).status).toBe(200);
}, 240_000);

test("zero-config mode: SIGHUP says there is no file to reload and the gateway keeps serving", async () => {
  const cwd = await mkdtemp(join(tmpdir(), "gw-reload-zero-"));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(ESIGN_|STAFFING_|GATEWAY_)/.test(name)),
  );
  const child: ChildProcess = spawn(
    process.execPath,
    [new URL("../../bin/gateway.js", import.meta.url).pathname, "serve", "--port", "0"],
    { cwd, env: { ...env, HOME: cwd }, stdio: ["ignore", "pipe", "pipe"] },
  );
  cleanup.push(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });
  const gw = { lines: [] as string[] };
  createInterface({ input: child.stdout! }).on("line", (line) => gw.lines.push(line));
  createInterface({ input: child.stderr! }).on("line", (line) => gw.lines.push(line));
  const url = JSON.parse(await waitForLine(gw, ['"msg":"listening"'])).url as string;
  const mark = gw.lines.length;
  child.kill("SIGHUP");
  const line = JSON.parse(await waitForLine(gw, ["no configuration file to reload"], mark));
  expect(line.level).toBe("warn");
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect(child.exitCode).toBe(null);
}, 240_000);
