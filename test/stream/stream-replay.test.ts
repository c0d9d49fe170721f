/**
 * The replay/live hand-over and retention, on the real Node entry (HTTP server, crossws,
 * WebSocket clients) run in-process around a memory store whose journal reads the test can hold:
 * events recorded while a replay is held are delivered once, in order, whether the held read
 * sees them too (overlap, de-duplicated by position) or not (backlog only). A cursor whose
 * following events retention purged gets `cursor_expired` and 4010.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { type RunningGateway, startNodeGateway } from "../../adapters/node/start-gateway.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { createLogger } from "../../src/ops/logger.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import { makeSecrets } from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook, webhookRequest } from "../helpers/signed-requests.ts";
import { openReadyWs, openWs } from "./stream-fixtures.ts";

const secrets = makeSecrets();
const key = "ui-key-for-replay-tests";
const base = memoryStore();
/** When set, replay page reads wait for it: before reading (`before`) or after (`after`). */
let hold: { where: "before" | "after"; reached: () => void; release: Promise<void> } | undefined;
const store: StoreDriver = {
  ...base,
  async readAfter(afterSeq, limit, filter) {
    const current = limit > 1 ? hold : undefined;
    if (current?.where === "before") {
      current.reached();
      await current.release;
    }
    const records = await base.readAfter(afterSeq, limit, filter);
    if (current?.where === "after") {
      current.reached();
      await current.release;
    }
    return records;
  },
};

let running: RunningGateway;
let wsBase: string;
beforeAll(async () => {
  const config = resolveConfig(
    {
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "esign", secrets: [secrets.esign] }],
      clients: [{ id: "ui", apiKeyHashes: [adminKeyHash(key)], scopes: { stream: {} } }],
      destinations: [{ id: "live", type: "stream" }],
      routes: [{ destinations: ["live"] }],
      log: { level: "silent" },
    },
    {},
  );
  running = await startNodeGateway({ config, host: "127.0.0.1", port: 0, store, logger: createLogger("silent") });
  wsBase = `${running.url.replace(/^http/, "ws")}/ws?token=${key}`;
});
afterAll(() => running?.stop());

async function post(): Promise<string> {
  const response = await postWebhook(running.url, "esign", await esignDelivery(secrets.esign, "agreement.sent"));
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

for (const where of ["before", "after"] as const) {
  test(`events recorded while the replay read is held (${where} the read) arrive once, in order`, async () => {
    const reference = await openReadyWs(wsBase);
    const first = [await post(), await post(), await post()];
    await reference.log.waitForEvents(3);
    const since = reference.log.frames.find((f) => f.event?.id === first[0])?.cursor;

    let reached!: () => void;
    const atHold = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    hold = { where, reached, release: new Promise<void>((resolve) => (release = resolve)) };
    const resumed = openWs(`${wsBase}&since=${since}`);
    await atHold;
    const during = [await post(), await post()];
    hold = undefined;
    release();
    const after = await post();

    await reference.log.waitForEvents(6);
    await resumed.log.waitFor((f) => f.event?.id === after, "the event after the hold");
    expect(resumed.log.eventIds()).toEqual([first[1], first[2], ...during, after]);
    expect(reference.log.eventIds()).toEqual([...first, ...during, after]);
    reference.ws.terminate();
    resumed.ws.terminate();
  });
}

test("a cursor whose following events were purged gets cursor_expired and 4010; the oldest resumable works", async () => {
  const reference = await openReadyWs(wsBase);
  const old = [await post(), await post()];
  await reference.log.waitForEvents(2);
  const oldCursor = reference.log.frames.find((f) => f.event?.id === old[0])?.cursor;
  // What retention maintenance does once these events are older than `retentionDays`.
  await store.purge(Date.now() + 1);
  const kept = await post();

  const expired = openWs(`${wsBase}&since=${oldCursor}`);
  expect(await expired.closed).toEqual({ code: 4010, reason: "cursor_expired" });
  expect(expired.log.frames).toHaveLength(1);
  const error = expired.log.frames[0];
  expect(error).toMatchObject({ type: "error", code: "cursor_expired", fatal: true, details: { cursor: oldCursor } });

  const resumed = await openReadyWs(`${wsBase}&since=${error?.details.oldestResumable}`);
  await resumed.log.waitForEvents(1);
  expect(resumed.log.eventIds()).toEqual([kept]);
  reference.ws.terminate();
  resumed.ws.terminate();
});

test("events recorded in the same turn go out as one batch per subscriber, complete and in order", async () => {
  const ws = await openReadyWs(wsBase);
  const sse = await fetch(`${running.url}/stream?token=${key}`);
  const reader = (sse.body as ReadableStream<Uint8Array>).getReader();
  let text = "";
  const readUntil = async (done: () => boolean) => {
    while (!done()) text += new TextDecoder().decode((await reader.read()).value);
  };
  await readUntil(() => text.includes('"type":"ready"'));
  // In-process requests on the memory store record both before the fan-out timer runs.
  const deliveries = await Promise.all(Array.from({ length: 5 }, () => esignDelivery(secrets.esign, "agreement.sent")));
  const answers = await Promise.all(
    deliveries.map((d) => running.gateway.fetch(webhookRequest(running.url, "esign", d))),
  );
  const ids = await Promise.all(answers.map(async (a) => ((await a.json()) as { id: string }).id));
  await ws.log.waitForEvents(5);
  const seqOrder = ws.log.frames.filter((f) => f.type === "event").map((f) => f.event.id);
  expect([...seqOrder].sort()).toEqual([...ids].sort());
  await readUntil(() => ids.every((id) => text.includes(id)));
  const sseOrder = [...text.matchAll(/"specversion":"1.0","id":"([^"]+)"/g)].map((m) => m[1]);
  expect(sseOrder).toEqual(seqOrder);
  const cursors = ws.log.frames.filter((f) => f.type === "event").map((f) => Number(f.cursor));
  expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
  await reader.cancel();
  ws.ws.terminate();
});
