/**
 * The TCP Redis client (ioredis) behind the `redis` driver: runs the shared Lua scripts by
 * EVALSHA (EVAL once per script after a server restart), fails commands fast while Redis is
 * unreachable (the ingress answers 503 + Retry-After rather than hanging), and reconnects on
 * its own. Also reads the server's persistence settings for the start-up durability warning.
 */
import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { isNoScriptError, type LuaScript, type ScriptReply, type ScriptRunner } from "./script-runner.ts";

export interface IoredisRunnerOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` (TLS). */
  url: string;
  /** A command without an answer after this long fails, ms. Default 5000. */
  commandTimeoutMs?: number;
}

/** The configured Redis URL, else `REDIS_URL`; throws naming both when neither is set. */
export function resolveRedisUrl(url: string | undefined): string {
  const resolved = url ?? process.env.REDIS_URL;
  if (!resolved) throw new Error("store.url: a redis:// URL, or set REDIS_URL");
  return resolved;
}

/** A connected runner plus the client (for pub/sub duplicates and the persistence check). */
export interface IoredisRunner extends ScriptRunner {
  readonly client: Redis;
}

/** Opens a connection and resolves once it is ready (rejects when Redis cannot be reached). */
export async function openIoredisRunner(options: IoredisRunnerOptions): Promise<IoredisRunner> {
  const client = createClient(options.url, options.commandTimeoutMs ?? 5000);
  // ioredis emits "error" on every failed reconnect; the failures surface as rejected commands.
  client.on("error", () => {});
  await client.connect();
  const shas = new Map<LuaScript, string>();
  const shaOf = (script: LuaScript) => {
    let sha = shas.get(script);
    if (!sha) {
      sha = createHash("sha1").update(script.source).digest("hex");
      shas.set(script, sha);
    }
    return sha;
  };
  return {
    name: "redis",
    ordered: true,
    client,
    async run(script, keys, args) {
      try {
        return (await client.evalsha(shaOf(script), keys.length, ...keys, ...args)) as ScriptReply;
      } catch (error) {
        if (!isNoScriptError(error)) throw error;
        return (await client.eval(script.source, keys.length, ...keys, ...args)) as ScriptReply;
      }
    },
    async ping() {
      await client.ping();
    },
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

/** A client that never queues commands while disconnected and keeps reconnecting. */
export function createClient(url: string, commandTimeoutMs: number, subscriber = false): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: subscriber,
    maxRetriesPerRequest: subscriber ? null : 0,
    commandTimeout: subscriber ? undefined : commandTimeoutMs,
    connectTimeout: 5_000,
    retryStrategy: (times) => Math.min(50 * times, 1_000),
  });
}

/**
 * Reads `appendonly` / `appendfsync` (CONFIG GET, else INFO persistence where CONFIG is
 * disabled) and returns a warning when an acknowledged event could be lost, else undefined.
 */
export async function checkPersistence(client: Redis): Promise<string | undefined> {
  let appendonly: string | undefined;
  let fsync: string | undefined;
  try {
    const reply = (await client.config("GET", "append*")) as string[];
    for (let i = 0; i < reply.length; i += 2) {
      if (reply[i] === "appendonly") appendonly = reply[i + 1];
      if (reply[i] === "appendfsync") fsync = reply[i + 1];
    }
  } catch {
    const info = await client.info("persistence").catch(() => "");
    appendonly = /aof_enabled:1/.test(info) ? "yes" : /aof_enabled:0/.test(info) ? "no" : undefined;
  }
  if (appendonly === "no") {
    return "Redis runs without AOF (appendonly no): acknowledged webhooks can be lost when Redis restarts; set appendonly yes and appendfsync always (docs/several-instances.md#redis-settings)";
  }
  if (appendonly === "yes" && fsync !== undefined && fsync !== "always") {
    return `Redis AOF uses appendfsync ${fsync}: up to about a second of acknowledged webhooks can be lost on a crash of the Redis host; set appendfsync always (docs/several-instances.md#redis-settings)`;
  }
  if (appendonly === undefined) {
    return "could not read the Redis persistence settings: make sure AOF with appendfsync always is on (docs/several-instances.md#redis-settings)";
  }
  return undefined;
}
