/** The sink conformance suite for the queue sink against a real redis-server. */
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { redisStreamSink } from "../../../adapters/sink/redis-stream.ts";
import { readStreamFields } from "../../../src/delivery/queue/build-stream-entry.ts";
import { testSinkDriver } from "../../conformance/sink-conformance.ts";
import { findFreePort, type RedisServer, startRedisServer } from "../../helpers/redis-server.ts";

let server: RedisServer;
let reader: Redis;
let deadUrl: string;
const stream = "conformance:events";

beforeAll(async () => {
  server = await startRedisServer();
  reader = new Redis(server.url);
  deadUrl = `redis://127.0.0.1:${await findFreePort()}`;
});

afterAll(async () => {
  reader?.disconnect();
  await server?.stop();
});

testSinkDriver(
  "queue (redis streams)",
  (kind) =>
    redisStreamSink({
      id: "queue",
      type: "queue",
      driver: "redis-streams",
      url: kind === "reachable" ? server.url : deadUrl,
      stream,
      maxLen: 10_000,
      timeoutMs: 2_000,
    }),
  async (eventId) => {
    const entries = await reader.xrange(stream, "-", "+");
    return entries
      .map(([, flat]) => readStreamFields(flat))
      .filter((fields) => fields.id === eventId)
      .map((fields) => ({ eventId: fields.id as string, type: fields.type as string }));
  },
);
