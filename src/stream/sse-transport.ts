/**
 * `GET /stream`: the live stream as Server-Sent Events. Each frame is the same JSON as on
 * WebSocket, in `data:`; event frames carry their cursor in `id:`, so a reconnecting EventSource
 * resumes by itself through `Last-Event-ID`. Heartbeats are comment lines (with an `id:` line
 * when the resume cursor moved). Refusals before the stream starts are error envelopes (401,
 * 403, 404, 400); later errors are an error frame followed by the end of the stream.
 *
 * Backpressure: the body is a pull-based stream with no internal buffer; frames wait in a queue
 * of our own until the runtime reads them, so the queue's size is what the consumer has not
 * taken. Past the bound the session ends the stream (after the error frame, which the consumer
 * reads once it catches up, or is cut when it does not within the idle timeout).
 */
import { concatBytes } from "../encoding/concat-bytes.ts";
import { createGatewayError } from "../errors.ts";
import { authorizeSubscriber } from "./authorize-subscriber.ts";
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

function eventBytes(frame: string, cursor: number): Uint8Array {
  if (lastEvent?.frame !== frame || lastEvent.cursor !== cursor) {
    lastEvent = { frame, cursor, bytes: encoder.encode(`id: ${formatCursor(cursor)}\ndata: ${frame}\n\n`) };
  }
  return lastEvent.bytes;
}

function createEventStreamSink(live: LiveStream, onCancel: () => void) {
  const { clock, options } = live;
  const queue: Uint8Array[] = [];
  let queued = 0;
  let readerWaiting = false;
  let lastRead = clock.now();
  let ending = false;
  let finished = false;
  let lastId = -1;
  let cutTimer: ReturnType<typeof setTimeout> | undefined;
  let drainWaiters: { threshold: number; resolve: (drained: boolean) => void }[] = [];
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const finish = (cut: boolean) => {
    if (finished) return;
    finished = true;
    clearTimeout(cutTimer);
    queue.length = 0;
    queued = 0;
    for (const waiter of drainWaiters) waiter.resolve(false);
    drainWaiters = [];
    if (cut) controller.error(new Error("stream cut"));
    else controller.close();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        lastRead = clock.now();
        const next = queue.shift();
        if (!next) {
          if (ending) return finish(false);
          readerWaiting = true;
          return;
        }
        queued -= next.byteLength;
        controller.enqueue(next);
        if (ending && queue.length === 0) return finish(false);
        drainWaiters = drainWaiters.filter((waiter) => (queued <= waiter.threshold ? waiter.resolve(true) : true));
      },
      cancel() {
        finished = true;
        clearTimeout(cutTimer);
        onCancel();
      },
    },
    { highWaterMark: 0 },
  );

  let batch: Uint8Array[] | undefined;
  const write = (text: string | Uint8Array) => {
    if (finished || ending) return;
    const bytes = typeof text === "string" ? encoder.encode(text) : text;
    if (batch) {
      batch.push(bytes);
      return;
    }
    if (readerWaiting) {
      readerWaiting = false;
      controller.enqueue(bytes);
    } else {
      queue.push(bytes);
      queued += bytes.byteLength;
    }
  };

  const sink: StreamSink = {
    send(frame, cursor) {
      if (cursor === undefined) return write(`data: ${frame}\n\n`);
      lastId = cursor;
      write(eventBytes(frame, cursor));
    },
    heartbeat(cursor) {
      // An `id:` line without data moves the client's Last-Event-ID without firing an event.
      const id = cursor > lastId ? `id: ${formatCursor(cursor)}\n` : "";
      lastId = Math.max(lastId, cursor);
      write(`: heartbeat\n${id}\n`);
    },
    bufferedAmount: () => queued,
    waitForDrain(threshold, timeoutMs) {
      if (queued <= threshold) return Promise.resolve(true);
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
        // The goodbye frame may sit in a batch: it goes out before the stream ends.
        const held = batch;
        batch = undefined;
        write(concatBytes(held));
      }
      // A consumer that stopped reading will not read a goodbye either: cut it now.
      if (code === "idle_timeout") return finish(true);
      if (queue.length === 0) return finish(false);
      ending = true;
      cutTimer = setTimeout(() => finish(true), options.idleTimeoutMs);
    },
    stalledSince: () => (queue.length > 0 ? lastRead : undefined),
    cork() {
      if (batch) return () => {};
      batch = [];
      return () => {
        const held = batch ?? [];
        batch = undefined;
        if (held.length > 0) write(concatBytes(held));
      };
    },
  };
  return { body, sink, write };
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
  const { body, sink, write } = createEventStreamSink(live, () => session?.dispose());
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
  return new Response(body, { status: 200, headers });
}
