/**
 * The `redis` driver's bound on commands Redis has not answered yet (adapters/store/redis/
 * ioredis-runner.ts), on a real redis-server stopped with SIGSTOP (the connection stays open,
 * nothing is answered): a command past its deadline fails but stays counted until Redis answers,
 * a large command past the bound fails at once instead of queueing another copy, small ones still
 * go (and time out), and once Redis answers again everything is given back and runs.
 *
 * Why it matters: during a burst of large webhooks Redis fell behind, each 503 made the upstream
 * retry, and each retry queued another copy of the event on the connection, without bound
 * (`npm run bench -- burst`).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type IoredisRunner, openIoredisRunner } from "../../adapters/store/redis/ioredis-runner.ts";
import { defineScript } from "../../adapters/store/redis/script-runner.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";

const SET = defineScript("set", "redis.call('SET', KEYS[1], ARGV[1]); return 1");
const BOUND = 1024 * 1024;

let redis: RedisServer;
let runner: IoredisRunner;
beforeAll(async () => {
  redis = await startRedisServer();
  runner = await openIoredisRunner({ url: redis.url, commandTimeoutMs: 300, maxUnansweredBytes: BOUND });
});
afterAll(async () => {
  if (redis?.pid) process.kill(redis.pid, "SIGCONT");
  await runner?.close();
  await redis?.stop();
});

it("counts a timed-out command until Redis answers, refuses a large one past the bound at once, and recovers", async () => {
  const large = "x".repeat(600 * 1024);
  expect(await runner.run(SET, ["warm"], [large])).toBe(1);
  expect(runner.unansweredBytes).toBe(0);
  if (!redis.pid) throw new Error("no redis pid");

  process.kill(redis.pid, "SIGSTOP");
  try {
    // Sent, not answered: it fails at the deadline and stays counted.
    await expect(runner.run(SET, ["first"], [large])).rejects.toThrow("Command timed out");
    expect(runner.unansweredBytes).toBeGreaterThanOrEqual(large.length);

    // Another copy would pass the bound: refused at once, well before the deadline, not counted.
    const started = performance.now();
    await expect(runner.run(SET, ["second"], [large])).rejects.toThrow(/Redis has not answered \d+ bytes/);
    expect(performance.now() - started).toBeLessThan(300);
    expect(runner.unansweredBytes).toBeLessThan(2 * large.length);

    // A small command fits: sent, and it times out as before.
    await expect(runner.run(SET, ["small"], ["1"])).rejects.toThrow("Command timed out");
  } finally {
    process.kill(redis.pid, "SIGCONT");
  }

  // Redis answers what it was sent: the bytes are given back, and large commands run again.
  for (let i = 0; i < 2_000 && runner.unansweredBytes > 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(runner.unansweredBytes).toBe(0);
  expect(await runner.run(SET, ["third"], [large])).toBe(1);
  expect(runner.unansweredBytes).toBe(0);
  // The command that timed out was still carried out (it was sent); the refused one never was.
  expect(await runner.run(defineScript("get", "return redis.call('STRLEN', KEYS[1])"), ["first"], [])).toBe(
    large.length,
  );
  expect(await runner.run(defineScript("exists", "return redis.call('EXISTS', KEYS[1])"), ["second"], [])).toBe(0);
});

it("closes within the deadline while Redis does not answer", async () => {
  const own = await openIoredisRunner({ url: redis.url, commandTimeoutMs: 300 });
  if (!redis.pid) throw new Error("no redis pid");
  process.kill(redis.pid, "SIGSTOP");
  try {
    const pending = own.run(SET, ["pending"], ["1"]).catch((error: unknown) => error);
    const started = performance.now();
    await own.close();
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(await pending).toBeInstanceOf(Error);
  } finally {
    process.kill(redis.pid, "SIGCONT");
  }
});
