/**
 * `GET /stream`: the live stream as Server-Sent Events. Each frame is the same JSON as on
 * WebSocket, in `data:`; event frames carry their cursor in `id:`, so a reconnecting EventSource
 * resumes by itself through `Last-Event-ID`. Heartbeats are comment lines (with an `id:` line
 * when the resume cursor moved). Refusals before the stream starts are error envelopes (401,
 * 403, 404, 400); later errors are an error frame followed by the end of the stream.
 *
 * Backpressure: frames wait in the body's channel (event-stream-channel.ts) until the runtime
 * reads them, so its queue is what the consumer has not taken. Past the bound the session ends
 * the stream (after the error frame, which the consumer reads once it catches up, or is cut when
 * it does not within the idle timeout). An event frame is formatted and encoded once for all
 * subscribers.
 */
import { FastResponse } from "srvx";
import { concatBytes } from "../encoding/concat-bytes.ts";
import { createGatewayError } from "../errors.ts";
import { authorizeSubscriber } from "./authorize-subscriber.ts";
import { type CreateEventStreamChannel, createWebEventStreamChannel } from "./event-stream-channel.ts";
import type { LiveStream } from "./live-stream.ts";
import { formatCursor } from "./stream-cursor.ts";
import type { StreamDeps } from "./stream-deps.ts";
import { createStreamSession, type StreamSink } from "./stream-session.ts";

const RETRY_MS = 1000;
const encoder = new TextEncoder();

/**
 * The bytes of the last event frame: a fan-out turn sends the same frame with the same cursor to
 * every SSE subscriber, so it is formatted and encoded once for all of them, not per subscriber.
 */
let lastEvent: { frame: string; cursor: number; bytes: Uint8Array } | undefined;

/**
 * The last corked batch joined: in a turn of several events every subscriber of an audience
 * holds the same frames (the same shared byte arrays), so they are joined once, not per subscriber.
 */
let lastBatch: { parts: Uint8Array[]; bytes: Uint8Array } | undefined;

function joinBatch(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const last = lastBatch;
  if (last && last.parts.length === parts.length && last.parts.every((part, i) => part === parts[i])) {
    return last.bytes;
  }
  const bytes = concatBytes(parts);
  lastBatch = { parts, bytes };
  return bytes;
}

function eventBytes(frame: string, cursor: number): Uint8Array {
  if (lastEvent?.frame !== frame || lastEvent.cursor !== cursor) {
    lastEvent = { frame, cursor, bytes: encoder.encode(`id: ${formatCursor(cursor)}\ndata: ${frame}\n\n`) };
  }
  return lastEvent.bytes;
}

function createEventStreamSink(live: LiveStream, open: CreateEventStreamChannel, onCancel: () => void) {
  const { clock, options } = live;
  let lastRead = clock.now();
  let ending = false;
  let finished = false;
  let lastId = -1;
  let cutTimer: ReturnType<typeof setTimeout> | undefined;
  let drainWaiters: { threshold: number; resolve: (drained: boolean) => void }[] = [];

  const channel = open({
    onRead() {
      lastRead = clock.now();
      if (drainWaiters.length > 0) {
        const queued = channel.queued();
        drainWaiters = drainWaiters.filter((waiter) => (queued <= waiter.threshold ? waiter.resolve(true) : true));
      }
      if (ending && channel.queued() === 0) finish(false);
    },
    onCancel() {
      finished = true;
      clearTimeout(cutTimer);
      onCancel();
    },
  });

  const finish = (cut: boolean) => {
    if (finished) return;
    finished = true;
    clearTimeout(cutTimer);
    for (const waiter of drainWaiters) waiter.resolve(false);
    drainWaiters = [];
    if (cut) channel.cut();
    else channel.end();
  };

  let batch: Uint8Array[] | undefined;
  const write = (text: string | Uint8Array) => {
    if (finished || ending) return;
    const bytes = typeof text === "string" ? encoder.encode(text) : text;
    if (batch) batch.push(bytes);
    else channel.push(bytes);
  };

  const sink: StreamSink = {
    send(frame, cursor) {
      if (cursor === undefined) return write(`data: ${frame}\n\n`);
      lastId = cursor;
      write(eventBytes(frame, cursor));
    },
    heartbeat(cursor) {
      const id = cursor > lastId ? `id: ${formatCursor(cursor)}\n` : "";
      lastId = Math.max(lastId, cursor);
      write(`: heartbeat\n${id}\n`);
    },
    bufferedAmount: () => channel.queued(),
    waitForDrain(threshold, timeoutMs) {
      if (channel.queued() <= threshold) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        drainWaiters.push({
          threshold,
          resolve: (drained) => {
            clearTimeout(timer);
            resolve(drained);
          },
        });
      });
    },
    end(code) {
      if (finished || ending) return;
      if (batch) {
        const held = batch;
        batch = undefined;
        write(joinBatch(held));
      }
      if (code === "idle_timeout") return finish(true);
      if (channel.queued() === 0) return finish(false);
      // The error frame waits behind what is queued: the body ends once the consumer read it,
      // or is cut when it does not within the idle timeout.
      ending = true;
      channel.end();
      cutTimer = setTimeout(() => finish(true), options.idleTimeoutMs);
    },
    stalledSince: () => (channel.queued() > 0 ? lastRead : undefined),
    cork() {
      if (batch) return () => {};
      batch = [];
      return () => {
        const held = batch ?? [];
        batch = undefined;
        if (held.length > 0) write(joinBatch(held));
      };
    },
  };
  return { body: channel.body, sink, write };
}

/** Handles `GET /stream`. */
export async function openEventStream(
  ctx: StreamDeps,
  live: LiveStream,
  request: Request,
  url: URL,
): Promise<Response> {
  const result = await authorizeSubscriber(
    ctx,
    live.destinationIds,
    request,
    url,
    request.headers.get("last-event-id"),
  );
  if (!result.ok) {
    const { status, code, message, details } = result.refusal;
    throw createGatewayError(status, code === "token_expired" ? "unauthorized" : (code as "forbidden"), message, {
      details: code === "token_expired" ? { reason: code } : details,
      headers: status === 401 ? { "www-authenticate": 'Bearer realm="gateway"' } : undefined,
    });
  }
  const { grant } = result;
  let session: ReturnType<typeof createStreamSession> | undefined;
  const { body, sink, write } = createEventStreamSink(
    live,
    ctx.createEventStreamChannel ?? createWebEventStreamChannel,
    () => session?.dispose(),
  );
  write(`retry: ${RETRY_MS}\n\n`);
  session = createStreamSession(live, grant, sink);
  session.start().catch((error) => ctx.logger.error("stream session failed", { error: String(error) }));

  const headers = new Headers({
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
    // A stream holds its connection for its whole life; when it ends, so does the connection
    // (otherwise a shutdown waits for the keep-alive timeout of every former subscriber).
    connection: "close",
  });
  const origin = request.headers.get("origin");
  if (origin && grant.allowedOrigins.includes(origin)) {
    headers.set("access-control-allow-origin", origin);
    headers.set("vary", "origin");
  }
  // srvx's FastResponse (the runtime's Response off Node) hands a runtime's own body stream to
  // its server as it is (event-stream-channel.ts).
  return new FastResponse(body, { status: 200, headers });
}
