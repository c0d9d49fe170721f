/**
 * The queue sink against a real redis-server: entry fields and payload, the MAXLEN bound,
 * consumer groups, Redis going down and coming back, timeouts, refusals and credentials.
 */
import { once } from "node:events";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { redisStreamSink } from "../../../adapters/sink/redis-stream.ts";
import { readStreamFields } from "../../../src/delivery/queue/build-stream-entry.ts";
import type { QueueDestination } from "../../../src/delivery/queue/queue-destination-schema.ts";
import type { Sink } from "../../../src/delivery/sink-contract.ts";
import { makeTestRecord } from "../../conformance/sink-conformance.ts";
import { type RedisServer, startRedisServer } from "../../helpers/redis-server.ts";

let server: RedisServer;
let reader: Redis;
const sinks: Sink[] = [];
const live = () => new AbortController().signal;

function openSink(overrides: Partial<QueueDestination> = {}): Sink {
  const sink = redisStreamSink({
    id: "jobs",
    type: "queue",
    driver: "redis-streams",
    url: server.url,
    stream: "gateway:events",
    maxLen: 100_000,
    timeoutMs: 2_000,
    ...overrides,
  });
  sinks.push(sink);
  return sink;
}

beforeAll(async () => {
  server = await startRedisServer();
  reader = new Redis(server.url);
});
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
});
afterAll(async () => {
  reader?.disconnect();
  await server?.stop();
});

describe("stream entries", () => {
  it("appends id, type, source, subject, time and the CloudEvent as payload, in that order", async () => {
    const sink = openSink({ stream: "entries:1" });
    const record = makeTestRecord({ type: "agreement.completed", subject: "agreements/agr-9" });
    expect(await sink.deliver(record, live())).toEqual({ ok: true });
    const entries = await reader.xrange("entries:1", "-", "+");
    expect(entries).toHaveLength(1);
    const [, flat] = entries[0] as [string, string[]];
    expect(flat.filter((_, i) => i % 2 === 0)).toEqual(["id", "type", "source", "subject", "time", "payload"]);
    const fields = readStreamFields(flat);
    expect(fields).toMatchObject({
      id: record.id,
      type: "agreement.completed",
      source: "/webhooks/esign",
      subject: "agreements/agr-9",
      time: record.event.time,
    });
    expect(JSON.parse(fields.payload as string)).toEqual(record.event);
  });

  it("leaves the subject field out when the event has none", async () => {
    const sink = openSink({ stream: "entries:2" });
    const record = makeTestRecord({ type: "staffing.queued", service: "staffing", subject: null });
    expect((await sink.deliver(record, live())).ok).toBe(true);
    const [[, flat]] = (await reader.xrange("entries:2", "-", "+")) as [[string, string[]]];
    expect(Object.keys(readStreamFields(flat))).toEqual(["id", "type", "source", "time", "payload"]);
  });

  it("keeps the stream near maxLen with approximate trimming, newest entries kept", async () => {
    const sink = openSink({ stream: "bounded", maxLen: 50 });
    const records = Array.from({ length: 400 }, () => makeTestRecord());
    for (const record of records) expect((await sink.deliver(record, live())).ok).toBe(true);
    const length = await reader.xlen("bounded");
    // `MAXLEN ~` removes whole macro nodes (100 entries by default), never below maxLen.
    expect(length).toBeGreaterThanOrEqual(50);
    expect(length).toBeLessThan(50 + 100);
    const [[, newest]] = (await reader.xrevrange("bounded", "+", "-", "COUNT", 1)) as [[string, string[]]];
    expect(readStreamFields(newest).id).toBe(records.at(-1)?.id);
  });
});

describe("consumer groups", () => {
  it("a group reads every entry once, acks it, and drops repeats by event id", async () => {
    await reader.xgroup("CREATE", "grouped", "workers", "$", "MKSTREAM");
    const sink = openSink({ stream: "grouped" });
    const first = makeTestRecord({ type: "candidate.accepted", service: "staffing" });
    const second = makeTestRecord({ type: "staffing.failed", service: "staffing" });
    for (const record of [first, second, first]) expect((await sink.deliver(record, live())).ok).toBe(true);

    const read = (await reader.xreadgroup("GROUP", "workers", "w1", "COUNT", 10, "STREAMS", "grouped", ">")) as [
      string,
      [string, string[]][],
    ][];
    const entries = read[0]?.[1] ?? [];
    expect(entries).toHaveLength(3);
    const handled = new Set<string>();
    for (const [entryId, flat] of entries) {
      handled.add(readStreamFields(flat).id as string);
      expect(await reader.xack("grouped", "workers", entryId)).toBe(1);
    }
    expect([...handled]).toEqual([first.id, second.id]);
    const pending = (await reader.xpending("grouped", "workers")) as [number, ...unknown[]];
    expect(pending[0]).toBe(0);
    expect(await reader.xreadgroup("GROUP", "workers", "w1", "COUNT", 10, "STREAMS", "grouped", ">")).toBeNull();
  });
});

describe("failures", () => {
  it("Redis down: a retryable failure result, then success once it is back", async () => {
    const own = await startRedisServer();
    const sink = openSink({ url: own.url, stream: "restart" });
    expect((await sink.deliver(makeTestRecord(), live())).ok).toBe(true);
    await own.stop();

    const down = await sink.deliver(makeTestRecord(), live());
    expect(down).toMatchObject({ ok: false, error: expect.stringMatching(/unreachable/) });
    expect(down.permanent).toBeUndefined();

    const again = await startRedisServer({ port: own.port });
    try {
      const record = makeTestRecord();
      expect(await sink.deliver(record, live())).toEqual({ ok: true });
      const check = new Redis(again.url);
      const entries = await check.xrange("restart", "-", "+");
      check.disconnect();
      expect(entries.map(([, flat]) => readStreamFields(flat).id)).toEqual([record.id]);
    } finally {
      await again.stop();
    }
  });

  describe("a server that accepts connections and never answers", () => {
    let hole: Server;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      hole = createServer((socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
      });
      hole.listen(0, "127.0.0.1");
      await once(hole, "listening");
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      hole.close();
      await once(hole, "close");
    });
    const holeUrl = () => `redis://127.0.0.1:${(hole.address() as AddressInfo).port}`;

    it("times out after timeoutMs with a retryable failure", async () => {
      const sink = openSink({ url: holeUrl(), timeoutMs: 300 });
      const result = await sink.deliver(makeTestRecord(), live());
      expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/timed out/) });
      expect(result.permanent).toBeUndefined();
    });

    it("resolves with a failure as soon as the engine aborts the attempt", async () => {
      const sink = openSink({ url: holeUrl(), timeoutMs: 60_000 });
      const controller = new AbortController();
      const pending = sink.deliver(makeTestRecord(), controller.signal);
      controller.abort();
      expect(await pending).toEqual({ ok: false, error: "attempt aborted" });
    });
  });

  it("a key of another type is a permanent failure (dead letter now)", async () => {
    await reader.set("not-a-stream", "x");
    const result = await openSink({ stream: "not-a-stream" }).deliver(makeTestRecord(), live());
    expect(result).toMatchObject({ ok: false, permanent: true, error: expect.stringMatching(/WRONGTYPE/) });
  });
});

describe("credentials", () => {
  it("uses the password from the URL; without it the failure is retryable and names no secret", async () => {
    const password = "s3cret-redis-password-4711";
    const guarded = await startRedisServer({ args: ["--requirepass", password] });
    try {
      const refused = await openSink({ url: guarded.url, stream: "auth" }).deliver(makeTestRecord(), live());
      expect(refused).toMatchObject({ ok: false, error: expect.stringMatching(/NOAUTH/) });
      expect(refused.permanent).toBeUndefined();

      const wrong = await openSink({
        url: `redis://:wrong-password@127.0.0.1:${guarded.port}`,
        stream: "auth",
      }).deliver(makeTestRecord(), live());
      expect(wrong).toMatchObject({ ok: false, error: expect.stringMatching(/WRONGPASS/) });
      expect(wrong.permanent).toBeUndefined();
      expect(JSON.stringify(wrong)).not.toContain("wrong-password");

      const url = `redis://:${password}@127.0.0.1:${guarded.port}`;
      expect(await openSink({ url, stream: "auth" }).deliver(makeTestRecord(), live())).toEqual({ ok: true });
    } finally {
      await guarded.stop();
    }
  });
});
