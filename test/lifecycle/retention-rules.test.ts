/**
 * Retention per source and type through a real gateway process, on the SQLite store and on a real
 * redis-server: events of both services are received, then aged in the store (the days passing),
 * and the rules as a user writes them in gateway.json remove exactly what each says: the most
 * specific rule wins, a rule may keep events past the global `retentionDays`, and a dry run
 * (`POST /events/retention`) lists what a run removes without removing it.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import { afterEach, describe, expect, test } from "vitest";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import {
  adminGet,
  adminKeyHash,
  esignDelivery,
  listAllEventIds,
  postWebhook,
  staffingDelivery,
} from "../helpers/signed-requests.ts";

const DAY = 86_400_000;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The retention part of the config, as docs/data-lifecycle.md shows it. */
const RETENTION = {
  retentionDays: 30,
  retention: [
    { types: ["candidate.*"], days: 7 },
    { sources: ["esign"], types: ["agreement.completed"], days: 365 },
    { sources: ["staffing"], days: 14 },
  ],
};

/** What is received, how many days ago it is made to be, and whether the rules keep it. */
const PLAN = [
  { name: "e-sign sent, 40 days (global 30: goes)", source: "esign", type: "agreement.sent", age: 40, kept: false },
  { name: "e-sign sent, 20 days (global 30: stays)", source: "esign", type: "agreement.sent", age: 20, kept: true },
  { name: "e-sign completed, 40 days (365: stays)", source: "esign", type: "agreement.completed", age: 40, kept: true },
  {
    name: "candidate, 10 days (types rule 7 beats source rule 14: goes)",
    source: "staffing",
    type: "candidate.accepted",
    age: 10,
    kept: false,
  },
  {
    name: "staffing completed, 10 days (source rule 14: stays)",
    source: "staffing",
    type: "staffing.completed",
    age: 10,
    kept: true,
  },
  {
    name: "staffing completed, 20 days (source rule 14: goes)",
    source: "staffing",
    type: "staffing.completed",
    age: 20,
    kept: false,
  },
] as const;

interface Harness {
  start(): Promise<GatewayProcess>;
  /** Moves the receive time of `id` back by `days`. */
  age(gateway: GatewayProcess, ages: Map<string, number>): Promise<GatewayProcess>;
}

async function sqliteHarness(): Promise<Harness> {
  const secrets = makeSecrets();
  const dataDir = await mkdtemp(join(tmpdir(), "gw-retention-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const config = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    store: { driver: "sqlite", dir: dataDir },
    ...RETENTION,
  };
  const start = async () => {
    const gateway = await startGatewayProcess({ secrets, dataDir, config });
    cleanups.push(() => gateway.kill());
    return gateway;
  };
  return {
    start,
    // The database is the gateway's alone while it runs: stop, age, start again (retention runs at start).
    async age(gateway, ages) {
      expect(await gateway.kill()).toBe(0);
      const db = new Database(join(dataDir, "gateway.db"));
      const update = db.prepare(
        "UPDATE events SET received_at = received_at - ?, record = json_set(record, '$.receivedAt', json_extract(record, '$.receivedAt') - ?) WHERE id = ?",
      );
      for (const [id, days] of ages) expect(update.run(days * DAY, days * DAY, id).changes).toBe(1);
      db.close();
      return start();
    },
  };
}

async function redisHarness(): Promise<Harness> {
  const server: RedisServer = await startRedisServer();
  cleanups.push(() => server.stop());
  const secrets = makeSecrets();
  const prefix = `r${randomBytes(4).toString("hex")}`;
  const config = {
    ...defaultTestConfig("unused", adminKeyHash(secrets.adminKey)),
    store: { driver: "redis", url: server.url, prefix },
    ...RETENTION,
  };
  return {
    async start() {
      const gateway = await startGatewayProcess({ secrets, config });
      cleanups.push(() => gateway.kill());
      return gateway;
    },
    async age(gateway, ages) {
      const client = new Redis(server.url);
      for (const [id, days] of ages) {
        const key = `{${prefix}}:ev:${encodeURIComponent(id)}`;
        const record = JSON.parse((await client.hget(key, "j")) as string) as { receivedAt: number };
        record.receivedAt -= days * DAY;
        await client.hset(key, "j", JSON.stringify(record));
        await client.zadd(`{${prefix}}:time`, record.receivedAt, encodeURIComponent(id));
      }
      client.disconnect();
      return gateway;
    },
  };
}

async function retention(gateway: GatewayProcess, dryRun: boolean) {
  const response = await fetch(`${gateway.url}/events/retention`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.secrets.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ dryRun }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    events: number;
    rules: { rule: number | string; events: number }[];
    sample?: { id: string; rule: number | string }[];
  };
}

describe.each([
  ["sqlite", sqliteHarness],
  ["redis", redisHarness],
] as const)("retention rules (%s store)", (store, makeHarness) => {
  test("each rule removes exactly what it says, the most specific rule winning", async () => {
    const harness = await makeHarness();
    let gateway = await harness.start();
    const ids: string[] = [];
    for (const step of PLAN) {
      const delivery =
        step.source === "esign"
          ? await esignDelivery(gateway.secrets.esign, step.type)
          : await staffingDelivery(gateway.secrets.staffing, step.type);
      const response = await postWebhook(gateway.url, step.source, delivery);
      expect(response.status, step.name).toBe(202);
      ids.push(((await response.json()) as { id: string }).id);
    }
    gateway = await harness.age(gateway, new Map(PLAN.map((step, i) => [ids[i] as string, step.age])));
    const gone = ids.filter((_, i) => !PLAN[i]?.kept);
    const kept = ids.filter((_, i) => PLAN[i]?.kept);

    if (store === "redis") {
      // The dry run names exactly what a run removes, each under the rule that applies.
      const preview = await retention(gateway, true);
      expect(preview.events).toBe(3);
      expect(new Set(preview.sample?.map((s) => s.id))).toEqual(new Set(gone));
      expect(Object.fromEntries(preview.sample?.map((s) => [s.id, s.rule]) ?? [])).toEqual({
        [gone[0] as string]: "retentionDays",
        [gone[1] as string]: 0,
        [gone[2] as string]: 2,
      });
      // The API hides events past their retention at once; the dry run removed none of them.
      expect(new Set(await listAllEventIds(gateway.url, gateway.secrets.adminKey))).toEqual(new Set(kept));
      expect((await retention(gateway, false)).events).toBe(3);
    }

    expect(new Set(await listAllEventIds(gateway.url, gateway.secrets.adminKey))).toEqual(new Set(kept));
    for (const id of gone)
      expect((await adminGet(gateway.url, `/events/${id}`, gateway.secrets.adminKey)).status).toBe(404);
    // The completed agreement is 40 days old, past the global 30: its rule keeps it readable.
    expect((await adminGet(gateway.url, `/events/${ids[2]}`, gateway.secrets.adminKey)).status).toBe(200);
    // Nothing more to remove.
    expect((await retention(gateway, true)).events).toBe(0);
  });
});
