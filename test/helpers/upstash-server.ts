/**
 * An Upstash REST front (`@humanwhocodes/upstash-redis-server`) in front of a real
 * redis-server, bound to 127.0.0.1 on a free port (its CLI would bind every interface).
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createApp } from "@humanwhocodes/upstash-redis-server";
import { afterAll, beforeAll } from "vitest";
import { startDurableRedis } from "./durable-redis.ts";

export interface UpstashFront {
  url: string;
  token: string;
  stop(): Promise<void>;
}

/** Starts the front for the Redis at `redisUrl`. */
export async function startUpstashFront(redisUrl: string): Promise<UpstashFront> {
  const token = randomBytes(16).toString("hex");
  const app = createApp({ token, redisUrl });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

/**
 * A durable redis-server and a front to it, started before the file's tests and stopped after
 * them (call at the top level of a test file); the function returns the front once started.
 */
export function upstashFrontForFile(): () => UpstashFront {
  let redis: Awaited<ReturnType<typeof startDurableRedis>> | undefined;
  let front: UpstashFront | undefined;
  beforeAll(async () => {
    redis = await startDurableRedis();
    front = await startUpstashFront(redis.url);
  });
  afterAll(async () => {
    await front?.stop();
    await redis?.stop();
  });
  return () => {
    if (!front) throw new Error("the Upstash front is started in beforeAll");
    return front;
  };
}
