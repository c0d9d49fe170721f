/**
 * The Redis Streams transport (ioredis) behind the `queue` destination on Node. One connection
 * per destination, opened on the first attempt. It never reconnects in the background: a failed
 * or timed-out attempt drops the connection and the next attempt (scheduled by the delivery
 * engine's retries and breaker) connects again, so a dead Redis is not hammered and an attempt
 * never waits longer than `timeoutMs`.
 */
import type { Redis } from "ioredis";
import { toXaddArguments } from "../../src/delivery/queue/build-stream-entry.ts";
import type { QueueDestination } from "../../src/delivery/queue/queue-destination-schema.ts";
import { createQueueSink } from "../../src/delivery/queue/queue-sink.ts";
import type { StreamAppendResult, StreamTransportFactory } from "../../src/delivery/queue/stream-transport.ts";
import type { SinkFactory } from "../../src/delivery/sink-contract.ts";

export interface RedisStreamOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://`. */
  url: string;
  /** Upper bound of one attempt (connect plus XADD), ms. Default 5000. */
  timeoutMs?: number;
}

type ErrorWithCode = Error & { code?: string };

/** Classifies an ioredis failure without echoing its message (which may name hosts or keys). */
function classify(error: unknown, lastConnectionError: ErrorWithCode | undefined): StreamAppendResult {
  // A refused AUTH arrives as an error event; the command then only sees a closed stream.
  const err = lastConnectionError?.name === "ReplyError" ? lastConnectionError : (error as ErrorWithCode);
  if (err?.name === "ReplyError") {
    // Redis answers long commands of unauthenticated clients with a protocol error, not NOAUTH.
    if (err.message.includes("unauthenticated")) return { ok: false, failure: "reply", detail: "NOAUTH" };
    return { ok: false, failure: "reply", detail: /^[A-Z]+/.exec(err.message)?.[0] ?? "ERR" };
  }
  if (err?.message === "Command timed out") return { ok: false, failure: "timeout", detail: "command" };
  return { ok: false, failure: "unreachable", detail: lastConnectionError?.code ?? err?.code ?? "connection closed" };
}

/** Creates a transport that appends entries with `XADD ... MAXLEN ~`. */
export const redisStreamTransport: StreamTransportFactory<RedisStreamOptions> = (options) => {
  const timeoutMs = options.timeoutMs ?? 5_000;
  let client: Promise<Redis> | undefined;
  let connecting: Promise<void> | undefined;
  let lastConnectionError: ErrorWithCode | undefined;
  let closed = false;

  const createClient = async () => {
    const { Redis } = await import("ioredis");
    const redis = new Redis(options.url, {
      lazyConnect: true,
      // Reconnecting is the engine's job (retry schedule, breaker); queued commands would
      // outlive the attempt's deadline.
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      enableReadyCheck: false,
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
    });
    redis.on("error", (error: ErrorWithCode) => {
      lastConnectionError = error;
    });
    return redis;
  };

  const ready = async (): Promise<Redis> => {
    client ??= createClient();
    const redis = await client;
    if (redis.status !== "ready") {
      lastConnectionError = undefined;
      connecting ??= redis.connect().finally(() => {
        connecting = undefined;
      });
      await connecting;
    }
    return redis;
  };

  const attempt = async (args: string[]): Promise<StreamAppendResult> => {
    try {
      const redis = await ready();
      const entryId = await redis.call("XADD", ...args);
      return { ok: true, entryId: String(entryId) };
    } catch (error) {
      return classify(error, lastConnectionError);
    }
  };

  /** Drops the connection so that the next attempt starts from a fresh one. */
  const reset = async () => {
    (await client)?.disconnect();
  };

  return {
    async append(entry, signal) {
      if (closed) return { ok: false, failure: "unreachable", detail: "transport closed" };
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      const deadline = new Promise<StreamAppendResult>((resolve) => {
        timer = setTimeout(() => resolve({ ok: false, failure: "timeout", detail: `${timeoutMs} ms` }), timeoutMs);
        onAbort = () => resolve({ ok: false, failure: "aborted", detail: "signal" });
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        const outcome = await Promise.race([attempt(toXaddArguments(entry)), deadline]);
        if (!outcome.ok && outcome.failure !== "reply") await reset();
        return outcome;
      } finally {
        clearTimeout(timer);
        if (onAbort) signal.removeEventListener("abort", onAbort);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      const redis = await client;
      if (redis?.status === "ready") await redis.quit().catch(() => undefined);
      redis?.disconnect();
    },
  };
};

/** The sink of a `queue` destination with the Redis Streams driver. */
export const redisStreamSink: SinkFactory<QueueDestination, void> = (destination) =>
  createQueueSink(destination, {
    transport: redisStreamTransport({ url: destination.url, timeoutMs: destination.timeoutMs }),
  });
