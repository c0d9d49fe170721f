/**
 * A redis-server with AOF on and `appendfsync always` (acknowledged = durable), its files in a
 * fresh temp dir that is removed on stop. For the tests of the Redis-backed drivers.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RedisServer, startRedisServer } from "./redis-server.ts";

/** Starts the server; `port` restarts one on the same address and `dir` on the same data. */
export async function startDurableRedis(options: { port?: number; dir?: string } = {}) {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "gw-redis-")));
  const server: RedisServer = await startRedisServer({
    port: options.port,
    args: ["--dir", dir, "--appendonly", "yes", "--appendfsync", "always"],
  });
  return {
    ...server,
    dir,
    /** Stops the server and keeps its data (for a restart). */
    pause: () => server.stop(),
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
