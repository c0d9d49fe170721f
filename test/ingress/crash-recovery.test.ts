/**
 * "Survives kill -9": a real gateway on the disk store takes thousands of signed webhooks of
 * both schemes over many keep-alive connections and is SIGKILLed mid-load, once a number of
 * acknowledgements were seen. Restarted on the same data directory, it gets every delivery that
 * was not acknowledged again, as the upstreams would retry them. The event log must then hold
 * every acknowledged event exactly once, and every event in the end, under the acknowledged ids.
 */
import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import { afterAll, expect, it } from "vitest";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { buildSampleDelivery, type SampleDelivery } from "../../src/samples/sample-webhooks.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";

const DELIVERIES = 3000;
const SENDERS = 64;
const KILL_AFTER_ACKS = 1000;
const ESIGN_TYPES = ["agreement.sent", "agreement.signed", "agreement.completed"];
const STAFFING_TYPES = ["candidate.accepted", "staffing.completed"];

interface Delivery extends SampleDelivery {
  sourceId: "esign" | "staffing";
  /** The gateway id the delivery must get: `evt_` + 128 bits of SHA-256(source NUL identity). */
  expectedId: string;
  /** The id from the first 2xx answer. */
  ackedId?: string;
}

const started: GatewayProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((gateway) => gateway.kill("SIGKILL")));
  await Promise.all(started.map((gateway) => rm(gateway.dataDir, { recursive: true, force: true })));
});

async function buildDeliveries(secrets: GatewayProcess["secrets"]): Promise<Delivery[]> {
  const crypto = createWebCrypto();
  const run = globalThis.crypto.randomUUID();
  return Promise.all(
    Array.from({ length: DELIVERIES }, async (_, i) => {
      const sourceId = i % 2 ? "staffing" : "esign";
      const uniqueId = `${run}-${i}`;
      const types = sourceId === "esign" ? ESIGN_TYPES : STAFFING_TYPES;
      const delivery = await buildSampleDelivery(
        crypto,
        sourceId,
        types[i % types.length] as string,
        secrets[sourceId],
        { uniqueId, subjectId: `subject-${i % 17}` },
      );
      const identity = sourceId === "esign" ? `evt-${uniqueId}` : `del-${uniqueId}`;
      const digest = createHash("sha256").update(`${sourceId}\u0000${identity}`).digest("hex");
      return { ...delivery, sourceId, expectedId: `evt_${digest.slice(0, 32)}` } as Delivery;
    }),
  );
}

/** Posts one delivery; the parsed answer, or undefined when the connection failed. */
async function post(url: string, delivery: Delivery) {
  try {
    const response = await fetch(`${url}/webhooks/${delivery.sourceId}`, {
      method: "POST",
      headers: delivery.headers,
      body: delivery.body,
    });
    return { status: response.status, body: (await response.json()) as { id?: string; duplicate?: boolean } };
  } catch {
    return undefined;
  }
}

/** Sends `queue` from `SENDERS` concurrent senders until it is empty or `stop()` says so. */
async function send(
  url: string,
  queue: Delivery[],
  onAnswer: (d: Delivery, status: number) => void,
  stop = () => false,
) {
  let next = 0;
  const sender = async () => {
    while (next < queue.length && !stop()) {
      const delivery = queue[next++] as Delivery;
      const answer = await post(url, delivery);
      if (answer && answer.status >= 200 && answer.status < 300) delivery.ackedId ??= answer.body.id;
      onAnswer(delivery, answer?.status ?? 0);
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
}

/** Every event in the log, paging through `GET /events`. */
async function listAll(gateway: GatewayProcess): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const query = cursor === null ? "limit=500" : `limit=500&cursor=${cursor}`;
    const response = await fetch(`${gateway.url}/events?${query}`, {
      headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { events: { id: string }[]; next_cursor: string | null };
    ids.push(...body.events.map((event) => event.id));
    cursor = body.next_cursor;
    if (cursor === null) return ids;
  }
  throw new Error("GET /events did not end within 50 pages");
}

it("keeps every acknowledged webhook, exactly once, across kill -9 and the upstreams' retries", {
  timeout: 180_000,
}, async () => {
  const first = await startGatewayProcess();
  started.push(first);
  const deliveries = await buildDeliveries(first.secrets);

  let acks = 0;
  await send(
    first.url,
    deliveries,
    (_, status) => {
      if (status === 202 && ++acks === KILL_AFTER_ACKS) first.child.kill("SIGKILL");
    },
    () => acks >= KILL_AFTER_ACKS,
  );
  await first.kill("SIGKILL");
  expect(first.child.signalCode).toBe("SIGKILL");
  const ackedBeforeCrash = deliveries.filter((d) => d.ackedId !== undefined);
  expect(ackedBeforeCrash.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
  expect(ackedBeforeCrash.length).toBeLessThan(DELIVERIES);

  const second = await startGatewayProcess({ dataDir: first.dataDir, secrets: first.secrets });
  started.push(second);
  const retried = deliveries.filter((d) => d.ackedId === undefined);
  const statuses = new Map<number, number>();
  await send(second.url, retried, (_, status) => statuses.set(status, (statuses.get(status) ?? 0) + 1));
  // A retry answers 202, or 200 duplicate when the crash came after the record and before the answer.
  expect([...statuses.keys()].every((status) => status === 202 || status === 200)).toBe(true);

  for (const delivery of deliveries) expect(delivery.ackedId).toBe(delivery.expectedId);
  const logged = await listAll(second);
  const loggedSet = new Set(logged);
  // First the promise of a 2xx: nothing acknowledged before the crash may be missing.
  expect(ackedBeforeCrash.filter((d) => !loggedSet.has(d.ackedId as string)).map((d) => d.ackedId)).toEqual([]);
  expect(loggedSet.size).toBe(logged.length);
  expect(logged).toHaveLength(DELIVERIES);
  expect(loggedSet).toEqual(new Set(deliveries.map((d) => d.ackedId)));
  await second.kill("SIGTERM");
});
