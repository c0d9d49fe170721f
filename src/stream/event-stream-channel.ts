/**
 * The byte channel under an SSE response: what the session's frames are handed to, and how much
 * of it the consumer has not read yet (the backpressure the slow-consumer bound acts on). The
 * default is a pull-based Web `ReadableStream` with no internal buffer, so the queue is exactly
 * what the runtime has not taken; a runtime adapter may supply its own (Node: a Node stream srvx
 * pipes into the socket without a promise per frame, adapters/node/node-event-stream-channel.ts).
 */

/** Called by a channel as its consumer reads or leaves. */
export interface EventStreamChannelHooks {
  /** The consumer asked for more: it read what was queued, or is waiting for bytes. */
  onRead(): void;
  /** The consumer went away before the end. */
  onCancel(): void;
}

/** One SSE response body. */
export interface EventStreamChannel {
  /** The response body (a `ReadableStream`, or the runtime's own stream its server writes as is). */
  body: BodyInit;
  /** Hands bytes to the consumer; they wait in the channel while it is not reading. */
  push(bytes: Uint8Array): void;
  /** Bytes handed over and not yet read. */
  queued(): number;
  /** Ends the body once the queued bytes are read. */
  end(): void;
  /** Ends the body at once with an error: the consumer sees a cut stream. */
  cut(): void;
}

export type CreateEventStreamChannel = (hooks: EventStreamChannelHooks) => EventStreamChannel;

/** The Web-streams channel (every runtime). */
export const createWebEventStreamChannel: CreateEventStreamChannel = (hooks) => {
  const queue: Uint8Array[] = [];
  let queued = 0;
  let readerWaiting = false;
  let ending = false;
  let done = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const close = () => {
    done = true;
    controller.close();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        const next = queue.shift();
        if (!next) {
          if (ending) return close();
          readerWaiting = true;
          hooks.onRead();
          return;
        }
        queued -= next.byteLength;
        controller.enqueue(next);
        if (ending && queue.length === 0) close();
        hooks.onRead();
      },
      cancel() {
        done = true;
        hooks.onCancel();
      },
    },
    { highWaterMark: 0 },
  );
  return {
    body,
    push(bytes) {
      if (done || ending) return;
      if (readerWaiting) {
        readerWaiting = false;
        controller.enqueue(bytes);
      } else {
        queue.push(bytes);
        queued += bytes.byteLength;
      }
    },
    queued: () => queued,
    end() {
      if (done) return;
      ending = true;
      if (queue.length === 0) close();
    },
    cut() {
      if (done) return;
      done = true;
      queue.length = 0;
      queued = 0;
      controller.error(new Error("stream cut"));
    },
  };
};
