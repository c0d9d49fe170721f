/**
 * The TCP Redis client (ioredis) behind the `redis` driver: runs the shared Lua scripts by
 * EVALSHA (EVAL once per script after a server restart), fails commands fast while Redis is
 * unreachable (the ingress answers 503 + Retry-After rather than hanging), and reconnects on
 * its own. Also reads the server's persistence settings for the start-up durability warning.
 *
 * Commands that Redis has not answered yet are bounded in bytes (`maxUnansweredBytes`). A
 * command past its deadline fails, but it was sent: the client keeps it, and its arguments, until
 * Redis answers. When Redis falls behind (a burst of large webhooks on `appendfsync always`),
 * the ingress answers 503, the upstreams retry, and every retry added another copy of the event
 * on the one connection, without bound. So the deadline is this runner's own (not ioredis's
 * `commandTimeout`, which stops waiting at its deadline but keeps the command), the bytes count
 * until Redis's answer or the connection's end, and a command that would pass the bound fails at
 * once ("Redis has not answered ..."), as when Redis is unreachable.
 */
import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { isNoScriptError, type LuaScript, type ScriptReply, type ScriptRunner } from "./script-runner.ts";

export interface IoredisRunnerOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` (TLS). */
  url: string;
  /** A command without an answer after this long fails, ms. Default 5000. */
  commandTimeoutMs?: number;
  /** Bytes of arguments of commands sent and not yet answered, at most. Default 64 MiB. */
  maxUnansweredBytes?: number;
}

/** Default bound on the bytes of commands Redis has not answered yet. */
export const MAX_UNANSWERED_BYTES = 64 * 1024 * 1024;

/** The configured Redis URL, else `REDIS_URL`; throws naming both when neither is set. */
export function resolveRedisUrl(url: string | undefined): string {
  const resolved = url ?? process.env.REDIS_URL;
  if (!resolved) throw new Error("store.url: a redis:// URL, or set REDIS_URL");
  return resolved;
}

/** A connected runner plus the client (for pub/sub duplicates and the persistence check). */
export interface IoredisRunner extends ScriptRunner {
  readonly client: Redis;
  /** Bytes of arguments of the commands sent and not yet answered (or ended with the connection). */
  readonly unansweredBytes: number;
}

/** Opens a connection and resolves once it is ready (rejects when Redis cannot be reached). */
export async function openIoredisRunner(options: IoredisRunnerOptions): Promise<IoredisRunner> {
  const timeoutMs = options.commandTimeoutMs ?? 5000;
  const maxUnanswered = options.maxUnansweredBytes ?? MAX_UNANSWERED_BYTES;
  // No ioredis `commandTimeout`: the deadline is `withDeadline`'s, the command stays counted.
  const client = createClient(options.url, undefined);
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
  const send = async (script: LuaScript, keys: readonly string[], args: readonly (string | number)[]) => {
    try {
      return (await client.evalsha(shaOf(script), keys.length, ...keys, ...args)) as ScriptReply;
    } catch (error) {
      if (!isNoScriptError(error)) throw error;
      return (await client.eval(script.source, keys.length, ...keys, ...args)) as ScriptReply;
    }
  };
  let unanswered = 0;
  return {
    name: "redis",
    ordered: true,
    client,
    get unansweredBytes() {
      return unanswered;
    },
    run(script, keys, args) {
      const size = argumentBytes(keys, args);
      if (unanswered > 0 && unanswered + size > maxUnanswered) {
        return Promise.reject(
          new Error(`Redis has not answered ${unanswered} bytes of commands yet; refusing more until it does`),
        );
      }
      unanswered += size;
      const answered = send(script, keys, args);
      const settle = () => {
        unanswered -= size;
      };
      answered.then(settle, settle);
      return withDeadline(answered, timeoutMs);
    },
    async ping() {
      await withDeadline(client.ping(), timeoutMs);
    },
    async close() {
      // QUIT waits for the answers to the commands before it: bounded, as they are.
      await withDeadline(client.quit(), timeoutMs).catch(() => client.disconnect());
    },
  };
}

/** The bytes (UTF-16 code units, about bytes for JSON) of a command's keys and arguments. */
function argumentBytes(keys: readonly string[], args: readonly (string | number)[]): number {
  let size = 0;
  for (const key of keys) size += key.length;
  for (const arg of args) size += typeof arg === "string" ? arg.length : 8;
  return size;
}

/** `promise`, or a "Command timed out" failure after `ms` (the command itself goes on). */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("Command timed out")), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * A client that never queues commands while disconnected and keeps reconnecting; commands fail
 * after `commandTimeoutMs` when given (the runner above applies its own deadline instead).
 */
export function createClient(url: string, commandTimeoutMs: number | undefined, subscriber = false): Redis {
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
    const reply = (await withDeadline(client.config("GET", "append*"), 5_000)) as string[];
    for (let i = 0; i < reply.length; i += 2) {
      if (reply[i] === "appendonly") appendonly = reply[i + 1];
      if (reply[i] === "appendfsync") fsync = reply[i + 1];
    }
  } catch {
    const info = await withDeadline(client.info("persistence"), 5_000).catch(() => "");
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
