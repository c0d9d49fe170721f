/**
 * Erasure by subject through a real gateway process, on the SQLite store and on a real
 * redis-server: `POST /events/erase` counts with `dryRun`, then replaces every event of the
 * subject by a tombstone. Afterwards a marker string that was in the bodies is found nowhere:
 * not in any API answer, not in the database file and its WAL (byte-wise), not in any Redis key.
 * A retried upstream delivery of an erased event is still a duplicate, its pending delivery is
 * cancelled (never attempted again), and the audit record `gateway.events.erased` says who,
 * when, what and how many.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
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
import { adminGet, adminKeyHash, esignDelivery, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const run = promisify(execFile);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  gateway: GatewayProcess;
  receiver: SinkReceiver;
  redis?: { server: RedisServer; prefix: string };
}

async function startSetup(store: "sqlite" | "redis"): Promise<Setup> {
  const receiver = await startSinkReceiver();
  cleanups.push(() => receiver.close());
  // Every delivery fails at first (and retries only a minute later): they stay pending.
  await fetch(`${receiver.url}/fail`, { method: "POST", body: JSON.stringify({ count: 1000, status: 503 }) });
  const secrets = makeSecrets();
  let redis: Setup["redis"];
  const base = defaultTestConfig("unused", adminKeyHash(secrets.adminKey));
  if (store === "redis") {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    redis = { server, prefix: `e${randomBytes(4).toString("hex")}` };
  }
  const dataDir = await mkdtemp(join(tmpdir(), "gw-erase-"));
  const gateway = await startGatewayProcess({
    secrets,
    dataDir,
    config: {
      ...base,
      store: redis
        ? { driver: "redis", url: redis.server.url, prefix: redis.prefix }
        : { driver: "sqlite", dir: dataDir },
      destinations: [
        {
          id: "hook",
          type: "http",
          url: `${receiver.url}/hook`,
          secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
          allowCidrs: ["127.0.0.1/32"],
          retry: { schedule: [60], jitter: 0 },
        },
      ],
      routes: [{ sources: ["esign", "staffing"], destinations: ["hook"] }],
    },
  });
  cleanups.push(async () => {
    await gateway.kill();
    await rm(gateway.dataDir, { recursive: true, force: true });
  });
  return { gateway, receiver, redis };
}

async function post(gateway: GatewayProcess, path: string, body: unknown) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.secrets.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** Waits (bounded) until every delivery of `id` has failed at least once. */
async function untilAttempted(gateway: GatewayProcess, id: string) {
  for (let i = 0; i < 500; i++) {
    const { body } = await adminGet(gateway.url, `/events/${id}`, gateway.secrets.adminKey);
    if (body.deliveries?.length > 0 && body.deliveries.every((d: { failures: number }) => d.failures > 0)) return body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`deliveries of ${id} were never attempted`);
}

/** Every byte the store holds, as one string. */
async function storeBytes(setup: Setup): Promise<string> {
  if (!setup.redis) {
    const files = await readdir(setup.gateway.dataDir);
    const parts = await Promise.all(
      files.filter((f) => f.startsWith("gateway.db")).map((f) => readFile(join(setup.gateway.dataDir, f))),
    );
    return Buffer.concat(parts).toString("latin1");
  }
  const client = new Redis(setup.redis.server.url);
  try {
    const keys = await client.keys("*");
    const values: string[] = [...keys];
    for (const key of keys) {
      const type = await client.type(key);
      if (type === "string") values.push((await client.get(key)) ?? "");
      else if (type === "hash") values.push(JSON.stringify(await client.hgetall(key)));
      else if (type === "zset") values.push(JSON.stringify(await client.zrange(key, 0, -1)));
      else if (type === "set") values.push(JSON.stringify(await client.smembers(key)));
      else if (type === "list") values.push(JSON.stringify(await client.lrange(key, 0, -1)));
      else if (type === "stream") values.push(JSON.stringify(await client.xrange(key, "-", "+")));
    }
    return values.join("\n");
  } finally {
    client.disconnect();
  }
}

describe.each(["sqlite", "redis"] as const)("erase by subject (%s store)", (store) => {
  test("leaves no trace of the bodies, keeps dedupe, cancels pending deliveries and records an audit event", async () => {
    const setup = await startSetup(store);
    const { gateway } = setup;
    const marker = `ZZERASE${randomBytes(6).toString("hex")}`;
    const agreement = `ag-${randomBytes(4).toString("hex")}`;
    const subject = `agreements/${agreement}`;
    const mine = await Promise.all(
      ["agreement.sent", "agreement.completed"].map((type) =>
        esignDelivery(gateway.secrets.esign, type, {
          subjectId: agreement,
          edit: (body: Record<string, unknown>) => {
            const participant = { id: "p-1", email: `${marker}@example.com`, name: `${marker} Person` };
            body.participant = participant;
            (body.data as Record<string, unknown>).participant = participant;
          },
        }),
      ),
    );
    const ids: string[] = [];
    for (const delivery of mine) {
      const response = await postWebhook(gateway.url, "esign", delivery);
      expect(response.status).toBe(202);
      ids.push(((await response.json()) as { id: string }).id);
    }
    const other = await postWebhook(gateway.url, "staffing", await staffingDelivery(gateway.secrets.staffing));
    expect(other.status).toBe(202);
    const otherId = ((await other.json()) as { id: string }).id;
    for (const id of ids) await untilAttempted(gateway, id);
    expect(await storeBytes(setup)).toContain(marker);

    const dry = await post(gateway, "/events/erase", { subject, dryRun: true });
    expect(dry).toEqual({
      status: 200,
      body: { dryRun: true, events: 2, already_erased: 0, deliveries_cancelled: 0 },
    });
    expect((await adminGet(gateway.url, `/events/${ids[0]}`, gateway.secrets.adminKey)).body.state).toBe("recorded");
    // The same through the CLI, as typed (the admin key from the environment).
    const cli = await run(process.execPath, [BIN, "erase", "--subject", subject, "--dry-run", "--url", gateway.url], {
      env: { ...process.env, GATEWAY_ADMIN_KEY: gateway.secrets.adminKey },
    });
    expect(cli.stdout.trim()).toBe(`would erase 2 events of ${subject} (0 erased before)`);

    const erased = await post(gateway, "/events/erase", { subject });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ dryRun: false, events: 2, already_erased: 0, deliveries_cancelled: 2 });

    // The API: tombstones, and the marker in no answer.
    const answers: string[] = [];
    for (const id of ids) {
      const { status, body } = await adminGet(gateway.url, `/events/${id}`, gateway.secrets.adminKey);
      expect(status).toBe(200);
      expect(body.state).toBe("erased");
      expect(body.event.data).toBeNull();
      expect(body.event.subject).toBe(subject);
      expect(body.raw_body_base64).toBe("");
      expect(body.headers).toEqual({});
      expect(body.deliveries).toEqual([
        expect.objectContaining({ state: "dead", last_error: "cancelled: the event was erased" }),
      ]);
      answers.push(JSON.stringify(body));
    }
    answers.push(JSON.stringify((await adminGet(gateway.url, "/events?limit=500", gateway.secrets.adminKey)).body));
    answers.push(
      JSON.stringify(
        (await adminGet(gateway.url, `/events?subject=${encodeURIComponent(subject)}`, gateway.secrets.adminKey)).body,
      ),
    );
    for (const answer of answers) expect(answer).not.toContain(marker);
    // The other subject's event is untouched.
    expect((await adminGet(gateway.url, `/events/${otherId}`, gateway.secrets.adminKey)).body.state).toBe("recorded");

    // The audit record.
    const audit = await adminGet(gateway.url, `/events/${erased.body.audit_event_id}`, gateway.secrets.adminKey);
    expect(audit.body.event).toMatchObject({
      type: "gateway.events.erased",
      source: "/gateway",
      service: "gateway",
      data: { selection: { subject }, events: 2, deliveries_cancelled: 2 },
    });
    expect(audit.body.event.data.by).toMatch(/^admin key sha256:[0-9a-f]{12}…$/);
    expect(JSON.stringify(audit.body)).not.toContain(gateway.secrets.adminKey);

    // The upstream retries an erased event: still a duplicate, nothing recorded again.
    const retried = await postWebhook(gateway.url, "esign", mine[0]!);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toEqual({ id: ids[0], duplicate: true });
    expect((await adminGet(gateway.url, `/events/${ids[0]}`, gateway.secrets.adminKey)).body.state).toBe("erased");

    // A second request finds them erased already.
    expect((await post(gateway, "/events/erase", { subject })).body).toMatchObject({ events: 0, already_erased: 2 });

    // Byte-wise: nothing of the bodies in the store (for SQLite, also after the clean close).
    expect(await storeBytes(setup)).not.toContain(marker);
    if (store === "sqlite") {
      await gateway.kill();
      expect(await storeBytes(setup)).not.toContain(marker);
    }
    // Nothing of the erased events reached the destination after the erasure.
    const received = (await (await fetch(`${setup.receiver.url}/received?path=/hook`)).json()) as unknown[];
    expect(JSON.stringify(received)).not.toContain(marker);
  });

  test("erases by content filter (with the dialects), leaves the others, and refuses an invalid filter", async () => {
    const setup = await startSetup(store);
    const { gateway } = setup;
    const marker = `ZZFILTER${randomBytes(6).toString("hex")}`;
    const send = async (email: string) => {
      const delivery = await esignDelivery(gateway.secrets.esign, "agreement.signed", {
        edit: (body: Record<string, unknown>) => {
          const participant = { id: "p-2", email, name: `${marker} Someone` };
          body.participant = participant;
          (body.data as Record<string, unknown>).participant = participant;
        },
      });
      const response = await postWebhook(gateway.url, "esign", delivery);
      expect(response.status).toBe(202);
      return ((await response.json()) as { id: string }).id;
    };
    const erasedIds = [await send("anna@erase.example"), await send("bo@erase.example")];
    const keptId = await send("cleo@keep.example");
    const body = {
      filter: { data: { participant: { email: { $endsWith: "@erase.example" } } } },
      filters: [{ prefix: { type: "agreement." } }],
    };
    const dry = await post(gateway, "/events/erase", { ...body, dryRun: true });
    expect(dry.body).toMatchObject({ dryRun: true, events: 2 });
    const erased = await post(gateway, "/events/erase", body);
    expect(erased.body).toMatchObject({ dryRun: false, events: 2 });
    for (const id of erasedIds) {
      const { body: event } = await adminGet(gateway.url, `/events/${id}`, gateway.secrets.adminKey);
      expect(event.state).toBe("erased");
      expect(JSON.stringify(event)).not.toContain(marker);
    }
    const kept = await adminGet(gateway.url, `/events/${keptId}`, gateway.secrets.adminKey);
    expect(kept.body.state).toBe("recorded");
    const audit = await adminGet(gateway.url, `/events/${erased.body.audit_event_id}`, gateway.secrets.adminKey);
    // The audit names no filter value: a keyed hash of the selection stands for it (docs/data-lifecycle.md).
    expect(audit.body.event.data.selection).toEqual({
      content_filter: true,
      hash: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(audit.body)).not.toContain("erase.example");

    const invalid = await post(gateway, "/events/erase", { filter: { data: { amount: { $gtx: 1 } } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe("invalid_request");
    expect(JSON.stringify(invalid.body.error.details)).toContain("filter.data.amount.$gtx");
    const nothing = await post(gateway, "/events/erase", {});
    expect(nothing.status).toBe(400);
  });
});
