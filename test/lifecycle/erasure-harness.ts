/**
 * The harness of the end-to-end erasure tests (erasure-reaches-every-copy.test.ts and
 * erasure-kill-9.test.ts, one file each so that the two run on both workers at once): a real
 * gateway process on SQLite, a real redis-server or Upstash (REST front over redis-server), with
 * one `http` destination `mapper`; requests as an operator sends them; every byte the store holds
 * and every API answer that could show an erased event's content.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { expect } from "vitest";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type SinkReceiver, startSinkReceiver } from "../helpers/http-sink-receiver.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import { adminGet, adminKeyHash, esignDelivery, type JsonAnswer, postWebhook } from "../helpers/signed-requests.ts";
import { startUpstashFront, type UpstashFront } from "../helpers/upstash-server.ts";

export type { JsonAnswer };

export type StoreKind = "sqlite" | "redis" | "upstash";

const cleanups: (() => Promise<unknown>)[] = [];
/** Stops what the test started (`afterEach(cleanUp)` in each test file), newest first. */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
}

/** Logs the address, then throws with it: the copies erasure must reach. */
export const LEAKY_TRANSFORM = `
export default (event) => {
  const email = event.data.participant.email;
  console.log("mapping participant", email);
  throw new Error("cannot map " + email);
};`;

export interface Setup {
  kind: StoreKind;
  secrets: ReturnType<typeof makeSecrets>;
  dataDir: string;
  config: Record<string, unknown>;
  env: Record<string, string>;
  gateway: GatewayProcess;
  receiver: SinkReceiver;
  redis?: { server: RedisServer; prefix: string };
}

export async function startSetup(kind: StoreKind, options: { failFast: boolean }): Promise<Setup> {
  const receiver = await startSinkReceiver();
  cleanups.push(() => receiver.close());
  const secrets = makeSecrets();
  const dataDir = await mkdtemp(join(tmpdir(), "gw-erasure-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {};
  let store: Record<string, unknown> = { driver: "sqlite", dir: dataDir };
  let redis: Setup["redis"];
  if (kind !== "sqlite") {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    redis = { server, prefix: `er${randomBytes(4).toString("hex")}` };
    store = { driver: "redis", url: server.url, prefix: redis.prefix };
    if (kind === "upstash") {
      const front: UpstashFront = await startUpstashFront(server.url);
      cleanups.push(() => front.stop());
      env.UPSTASH_REDIS_REST_TOKEN = front.token;
      store = { driver: "upstash", url: front.url, prefix: redis.prefix };
    }
  }
  const config: Record<string, unknown> = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    store,
    destinations: [
      {
        id: "mapper",
        type: "http",
        url: `${receiver.url}/mapper`,
        secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
        allowCidrs: ["127.0.0.1/32"],
        // Fail fast into dead letters through the leaky transform (copies test), or answered 503
        // and retried only in an hour (crash test: the deliveries stay pending).
        ...(options.failFast
          ? { transform: { code: LEAKY_TRANSFORM }, retry: { schedule: [0.05], jitter: 0 } }
          : { retry: { schedule: [3600], jitter: 0 } }),
      },
    ],
    routes: [{ sources: ["esign"], destinations: ["mapper"] }],
    operationalEvents: {
      failing: { windowSeconds: 300, minAttempts: 2, errorRate: 0.5, recoverAfterSuccesses: 5 },
      deadBatchSeconds: 1,
    },
  };
  if (!options.failFast) {
    await fetch(`${receiver.url}/fail`, { method: "POST", body: JSON.stringify({ count: 1_000_000, status: 503 }) });
  }
  const gateway = await startGatewayProcess({ secrets, dataDir, config, env });
  cleanups.push(() => gateway.kill("SIGKILL"));
  return { kind, secrets, dataDir, config, env, gateway, receiver, redis };
}

export async function restart(setup: Setup): Promise<void> {
  setup.gateway = await startGatewayProcess({
    secrets: setup.secrets,
    dataDir: setup.dataDir,
    config: setup.config,
    env: setup.env,
  });
  const gateway = setup.gateway;
  cleanups.push(() => gateway.kill("SIGKILL"));
}

export async function get(setup: Setup, path: string): Promise<JsonAnswer> {
  const { status, body } = await adminGet(setup.gateway.url, path, setup.secrets.adminKey);
  expect(status, `GET ${path}`).toBe(200);
  return body;
}

export async function post(setup: Setup, path: string, body: unknown) {
  const response = await fetch(`${setup.gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${setup.secrets.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as JsonAnswer };
}

/** Polls `check` (bounded, 20 ms apart) until it gives a value. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, tries = 3000): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Records an e-sign event of `agreement` whose participant has `email`; its gateway id. */
export async function send(setup: Setup, agreement: string, email: string, type = "agreement.signed"): Promise<string> {
  const delivery = await esignDelivery(setup.secrets.esign, type, {
    subjectId: agreement,
    edit: (body: Record<string, unknown>) => {
      const participant = { id: "p-1", email, name: "Participant" };
      body.participant = participant;
      (body.data as Record<string, unknown>).participant = participant;
    },
  });
  const response = await postWebhook(setup.gateway.url, "esign", delivery);
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

/** Every gateway event of `type`, newest first. */
export async function gatewayEvents(setup: Setup, type: string): Promise<JsonAnswer[]> {
  const body = await get(setup, `/events?source=gateway&type=${encodeURIComponent(type)}&limit=500`);
  return body.events;
}

/** Every byte the store holds, as text: the database and its WAL, or every Redis key and value. */
export async function storeBytes(setup: Setup): Promise<string> {
  if (!setup.redis) {
    const files = (await readdir(setup.dataDir)).filter((f) => f.startsWith("gateway.db"));
    expect(files).toContain("gateway.db");
    const parts = await Promise.all(files.map((f) => readFile(join(setup.dataDir, f))));
    return Buffer.concat(parts).toString("latin1");
  }
  const client = new Redis(setup.redis.server.url);
  try {
    const values: string[] = [];
    let cursor = "0";
    for (let i = 0; i < 100_000; i++) {
      const [next, keys] = await client.scan(cursor, "COUNT", 500);
      for (const key of keys) {
        values.push(key);
        const type = await client.type(key);
        if (type === "string") values.push((await client.get(key)) ?? "");
        else if (type === "hash") values.push(JSON.stringify(await client.hgetall(key)));
        else if (type === "zset") values.push(JSON.stringify(await client.zrange(key, 0, -1, "WITHSCORES")));
        else if (type === "set") values.push(JSON.stringify(await client.smembers(key)));
        else if (type === "list") values.push(JSON.stringify(await client.lrange(key, 0, -1)));
        else if (type === "stream") values.push(JSON.stringify(await client.xrange(key, "-", "+")));
        else throw new Error(`unexpected Redis type ${type} of ${key}`);
      }
      cursor = next;
      if (cursor === "0") break;
    }
    return values.join("\n");
  } finally {
    client.disconnect();
  }
}

/** Every API answer that could show an erased event's content, as one text. */
export async function apiAnswers(setup: Setup, ids: readonly string[]): Promise<string> {
  const answers: unknown[] = [
    await get(setup, "/events?limit=500"),
    await get(setup, "/events?source=gateway&limit=500"),
    await get(setup, "/destinations"),
    await get(setup, "/destinations/mapper/deliveries?limit=500"),
    await get(setup, "/destinations/mapper/deliveries?state=dead&limit=500"),
    await get(setup, "/conditions"),
  ];
  for (const id of ids) answers.push(await get(setup, `/events/${id}`));
  for (const event of await gatewayEvents(setup, "gateway.deliveries.dead")) {
    answers.push(await get(setup, `/events/${event.event.id}`));
  }
  return JSON.stringify(answers);
}

/** Posts `count` events of one agreement, `parallel` at a time; their ids (oldest first). */
export async function sendMany(setup: Setup, agreement: string, email: string, count: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      ids[i] = await send(setup, agreement, email);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return ids;
}
