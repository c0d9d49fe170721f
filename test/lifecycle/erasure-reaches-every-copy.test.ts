/**
 * Erasure reaches every copy of a person's data (docs/data-lifecycle.md), through real gateway
 * processes on SQLite, on a real redis-server and on Upstash (REST front over redis-server).
 *
 * A destination's transform logs the participant's e-mail (a unique marker address) and throws
 * `cannot map <email>`: the events dead-letter, the attempt records hold the address (error and
 * console lines), and so do the operational events `gateway.destination.failing` and
 * `gateway.deliveries.dead` (their `last_error`). After an erasure by subject and one by a
 * content filter naming the other address, a byte search finds neither address in any API answer
 * (`/events`, `/events/{id}`, `/destinations/*\/deliveries`, dead letters, `/destinations`,
 * `/conditions`), nor in the SQLite database and its WAL (running and after stop), nor in any
 * Redis key or value (SCAN, then every value by its type). The audit event exists, holds no
 * filter value, and the same selection asked again is answered from it (audited once).
 *
 * Crash: `kill -9` while an erasure of 3,000 events runs (synchronised on the newest event
 * having become a tombstone while the oldest is not yet), then a restart: every event ends
 * erased and `gateway.events.erased` is recorded exactly once, with the full count.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, test } from "vitest";
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

type StoreKind = "sqlite" | "redis" | "upstash";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** Logs the address, then throws with it: the copies erasure must reach. */
const LEAKY_TRANSFORM = `
export default (event) => {
  const email = event.data.participant.email;
  console.log("mapping participant", email);
  throw new Error("cannot map " + email);
};`;

interface Setup {
  kind: StoreKind;
  secrets: ReturnType<typeof makeSecrets>;
  dataDir: string;
  config: Record<string, unknown>;
  env: Record<string, string>;
  gateway: GatewayProcess;
  receiver: SinkReceiver;
  redis?: { server: RedisServer; prefix: string };
}

async function startSetup(kind: StoreKind, options: { failFast: boolean }): Promise<Setup> {
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

async function restart(setup: Setup): Promise<void> {
  setup.gateway = await startGatewayProcess({
    secrets: setup.secrets,
    dataDir: setup.dataDir,
    config: setup.config,
    env: setup.env,
  });
  const gateway = setup.gateway;
  cleanups.push(() => gateway.kill("SIGKILL"));
}

async function get(setup: Setup, path: string): Promise<JsonAnswer> {
  const { status, body } = await adminGet(setup.gateway.url, path, setup.secrets.adminKey);
  expect(status, `GET ${path}`).toBe(200);
  return body;
}

async function post(setup: Setup, path: string, body: unknown) {
  const response = await fetch(`${setup.gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${setup.secrets.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as JsonAnswer };
}

/** Polls `check` (bounded, 20 ms apart) until it gives a value. */
async function until<T>(what: string, check: () => Promise<T | undefined>, tries = 3000): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Records an e-sign event of `agreement` whose participant has `email`; its gateway id. */
async function send(setup: Setup, agreement: string, email: string, type = "agreement.signed"): Promise<string> {
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
async function gatewayEvents(setup: Setup, type: string): Promise<JsonAnswer[]> {
  const body = await get(setup, `/events?source=gateway&type=${encodeURIComponent(type)}&limit=500`);
  return body.events;
}

/** Every byte the store holds, as text: the database and its WAL, or every Redis key and value. */
async function storeBytes(setup: Setup): Promise<string> {
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
async function apiAnswers(setup: Setup, ids: readonly string[]): Promise<string> {
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

describe.each(["sqlite", "redis", "upstash"] as const)("erasure reaches every copy (%s store)", (kind) => {
  test("no trace of the address in events, attempt records, dead letters, operational events, the store's bytes", async () => {
    const setup = await startSetup(kind, { failFast: true });
    const tag = randomBytes(6).toString("hex");
    const subjectEmail = `zzsubject${tag}@erasure.example`;
    const filterEmail = `zzfilter${tag}@erasure.example`;
    const keptEmail = `zzkept${tag}@keep.example`;
    const agreement = `ag-${tag}`;
    const subjectIds: string[] = [];
    for (const type of ["agreement.sent", "agreement.viewed", "agreement.signed"]) {
      subjectIds.push(await send(setup, agreement, subjectEmail, type));
    }
    const deadLetter = async (id: string) =>
      until(`dead letter of ${id}`, async () => {
        const event = await get(setup, `/events/${id}`);
        return event.deliveries?.[0]?.state === "dead" ? true : undefined;
      });
    // Every delivery dead-letters, its attempts holding the address (error and console lines);
    // the operational events about the destination quote the subject's address first.
    for (const id of subjectIds) await deadLetter(id);
    const quoted = await until("operational events quoting the address", async () => {
      const events = [
        ...(await gatewayEvents(setup, "gateway.destination.failing")),
        ...(await gatewayEvents(setup, "gateway.deliveries.dead")),
      ];
      return events.some((e) => e.event.type === "gateway.deliveries.dead") ? events : undefined;
    });
    expect(JSON.stringify(quoted)).toContain(`cannot map ${subjectEmail}`);
    const filterIds = [await send(setup, `ag-f1-${tag}`, filterEmail), await send(setup, `ag-f2-${tag}`, filterEmail)];
    const keptId = await send(setup, `ag-k-${tag}`, keptEmail);
    const ids = [...subjectIds, ...filterIds];
    for (const id of [...filterIds, keptId]) await deadLetter(id);
    const before = await get(setup, `/events/${subjectIds[0]}`);
    const attempt = before.deliveries[0].attempts[0];
    expect(attempt.error).toContain(`cannot map ${subjectEmail}`);
    expect(attempt.logs.join("\n")).toContain(subjectEmail);
    // The operational events quote an address too (their last_error).
    const deadEvents = await until("a gateway.deliveries.dead event", async () => {
      const events = await gatewayEvents(setup, "gateway.deliveries.dead");
      const count = events.reduce((sum: number, e: JsonAnswer) => sum + e.event.data.count, 0);
      return count >= ids.length + 1 ? events : undefined;
    });
    expect(JSON.stringify(deadEvents)).toMatch(/cannot map zz/);
    const failing = await gatewayEvents(setup, "gateway.destination.failing");
    expect(failing.length).toBeGreaterThan(0);
    expect(await storeBytes(setup)).toContain(subjectEmail);
    expect(await storeBytes(setup)).toContain(filterEmail);
    expect(await apiAnswers(setup, ids)).toContain(subjectEmail);

    // Erase by subject, then by a filter naming the other address.
    const bySubject = await post(setup, "/events/erase", { subject: `agreements/${agreement}` });
    expect(bySubject.status).toBe(200);
    expect(bySubject.body).toMatchObject({ dryRun: false, events: 3, already_erased: 0 });
    const filterBody = { filter: { data: { participant: { email: filterEmail } } } };
    const byFilter = await post(setup, "/events/erase", filterBody);
    expect(byFilter.status).toBe(200);
    expect(byFilter.body).toMatchObject({ dryRun: false, events: 2, already_erased: 0 });

    // No API answer holds either address; the kept event and its copies are untouched.
    const answers = await apiAnswers(setup, ids);
    expect(answers).not.toContain(subjectEmail);
    expect(answers).not.toContain(filterEmail);
    expect(answers).not.toContain(`zzsubject${tag}`);
    expect(answers).not.toContain(`zzfilter${tag}`);
    const kept = await get(setup, `/events/${keptId}`);
    expect(kept.state).toBe("recorded");
    expect(kept.deliveries[0].attempts[0].error).toContain(`cannot map ${keptEmail}`);
    // What an operator still reads of an erased event's deliveries: states, codes, no texts.
    const scrubbed = await get(setup, `/events/${subjectIds[0]}`);
    expect(scrubbed.state).toBe("erased");
    expect(scrubbed.deliveries[0]).toMatchObject({ state: "dead", last_error: "(erased with the event)" });
    expect(scrubbed.deliveries[0].attempts[0]).toMatchObject({ ok: false, error: "(erased with the event)" });
    expect(scrubbed.deliveries[0].attempts[0].logs).toBeUndefined();
    // A filter's event by the dialect-free filter endpoint finds nothing any more.
    const search = await get(setup, `/events?filter=${encodeURIComponent(JSON.stringify(filterBody.filter))}`);
    expect(search.events).toEqual([]);

    // The audit events: who, when, how many; the subject; a keyed hash, never the filter's value.
    const audits = await gatewayEvents(setup, "gateway.events.erased");
    expect(audits).toHaveLength(2);
    const filterAudit = audits.find((a: JsonAnswer) => a.event.id === byFilter.body.audit_event_id);
    expect(filterAudit.event.data).toMatchObject({
      by: expect.stringMatching(/^admin key sha256:[0-9a-f]{12}…$/),
      selection: { content_filter: true, hash: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/) },
      events: 2,
      already_erased: 0,
    });
    const subjectAudit = audits.find((a: JsonAnswer) => a.event.id === bySubject.body.audit_event_id);
    expect(subjectAudit.event.data.gateway_events_scrubbed).toBeGreaterThan(0);
    expect(subjectAudit.event.data.selection).toMatchObject({ subject: `agreements/${agreement}` });
    expect(JSON.stringify(audits)).not.toContain(filterEmail);
    expect(JSON.stringify(audits)).not.toContain(setup.secrets.adminKey);

    // The same selection again: nothing new, the first audit answers. (A tombstone has no content
    // left for a filter to match: the erased events are not counted as `already_erased` here.)
    const again = await post(setup, "/events/erase", { filter: { data: { participant: { email: filterEmail } } } });
    expect(again.body).toEqual({
      dryRun: false,
      events: 0,
      already_erased: 0,
      deliveries_cancelled: 0,
      audit_event_id: byFilter.body.audit_event_id,
    });
    expect(await gatewayEvents(setup, "gateway.events.erased")).toHaveLength(2);

    // The store's bytes: running, then (SQLite) the database and WAL after a clean stop.
    let bytes = await storeBytes(setup);
    expect(bytes).not.toContain(subjectEmail);
    expect(bytes).not.toContain(filterEmail);
    expect(bytes).toContain(keptEmail);
    if (kind === "sqlite") {
      expect(await setup.gateway.kill("SIGTERM")).toBe(0);
      bytes = await storeBytes(setup);
      expect(bytes).not.toContain(`zzsubject${tag}`);
      expect(bytes).not.toContain(`zzfilter${tag}`);
      expect(bytes).toContain(keptEmail);
    }
  }, 240_000);
});

/** Posts `count` events of one agreement, `parallel` at a time; their ids (oldest first). */
async function sendMany(setup: Setup, agreement: string, email: string, count: number): Promise<string[]> {
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

describe.each(["sqlite", "redis"] as const)("erasure interrupted by kill -9 (%s store)", (kind) => {
  test("finishes after the restart: every event erased, audited exactly once with the full count", async () => {
    const setup = await startSetup(kind, { failFast: false });
    const tag = randomBytes(6).toString("hex");
    const email = `zzcrash${tag}@erasure.example`;
    const agreement = `ag-crash-${tag}`;
    const subject = `agreements/${agreement}`;
    const COUNT = 3000;
    const ids = await sendMany(setup, agreement, email, COUNT);
    const newest = (await get(setup, `/events?subject=${encodeURIComponent(subject)}&limit=1`)).events[0].id;
    expect((await post(setup, "/events/erase", { subject, dryRun: true })).body.events).toBe(COUNT);

    // The erasure runs newest first; kill -9 once the newest is a tombstone.
    const erasing = post(setup, "/events/erase", { subject }).catch((error: unknown) => error);
    await until("the erasure to make progress", async () => {
      const event = await adminGet(setup.gateway.url, `/events/${newest}`, setup.secrets.adminKey);
      return event.body.state === "erased" ? true : undefined;
    });
    await setup.gateway.kill("SIGKILL");
    expect(await erasing).toBeInstanceOf(Error);

    await restart(setup);
    const audit = await until("the audit of the finished erasure", async () => {
      const audits = await gatewayEvents(setup, "gateway.events.erased");
      return audits.length > 0 ? audits : undefined;
    });
    // The restart found it unfinished (`resumed`) and finished it: one audit, the full count.
    expect(audit).toHaveLength(1);
    expect(audit[0].event.data).toMatchObject({
      selection: { subject },
      events: COUNT,
      already_erased: 0,
      resumed: true,
      deliveries_cancelled: expect.any(Number),
    });
    expect((await post(setup, "/events/erase", { subject, dryRun: true })).body).toEqual({
      dryRun: true,
      events: 0,
      already_erased: COUNT,
      deliveries_cancelled: 0,
    });
    expect((await get(setup, `/events/${ids[0]}`)).state).toBe("erased");
    // Asked again: answered from the same audit event, nothing recorded twice.
    const again = await post(setup, "/events/erase", { subject });
    // (It may join the resumed run if that is still compacting: the same report, the same audit.)
    expect(again.body.audit_event_id).toBe(audit[0].event.id);
    expect(again.body.events + again.body.already_erased).toBe(COUNT);
    expect(await gatewayEvents(setup, "gateway.events.erased")).toHaveLength(1);
    expect(await storeBytes(setup)).not.toContain(`zzcrash${tag}`);
  }, 600_000);
});
