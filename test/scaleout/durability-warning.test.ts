/**
 * At start the `redis` driver reads the server's persistence settings and warns when an
 * acknowledged webhook could be lost (no AOF, or AOF without `appendfsync always`); with AOF
 * and `appendfsync always` it stays silent.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import { startRedisServer } from "../helpers/redis-server.ts";
import { type Cluster, startCluster } from "./cluster-fixtures.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const durabilityLines = (cluster: Cluster) =>
  cluster.gateways.flatMap((g) => g.lines).filter((line) => line.includes('"msg":"durability"'));

test.each([
  ["no AOF", ["--appendonly", "no"], /appendonly no/],
  ["AOF with appendfsync everysec", ["--appendonly", "yes", "--appendfsync", "everysec"], /appendfsync everysec/],
])("warns at start when Redis runs with %s", async (_, args, expected) => {
  const dir = await mkdtemp(join(tmpdir(), "gw-redis-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const redis = await startRedisServer({ args: [...args, "--dir", dir] });
  cleanups.push(() => redis.stop());
  const cluster = await startCluster({ redisUrl: redis.url, count: 1 });
  cleanups.push(() => cluster.stop());
  const lines = durabilityLines(cluster);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(expected);
  expect(lines[0]).toMatch(/"level":"warn"/);
});

test("stays silent with AOF and appendfsync always", async () => {
  const redis = await startDurableRedis();
  cleanups.push(() => redis.stop());
  const cluster = await startCluster({ redisUrl: redis.url, count: 1 });
  cleanups.push(() => cluster.stop());
  expect(durabilityLines(cluster)).toEqual([]);
});
