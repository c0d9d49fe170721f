/**
 * The Node SSE channel (`CreateEventStreamChannel`, src/stream/event-stream-channel.ts): the
 * response body is a Node stream, which srvx pipes into the socket as it is, so a frame costs one
 * push and one socket write instead of a Web-stream read and a promise per subscriber. What the
 * consumer has not taken waits in the stream's buffer (the pipe pauses it while the socket is
 * full), which is the queue the slow-consumer bound measures.
 */
import { Readable } from "node:stream";
import type { CreateEventStreamChannel, EventStreamChannelHooks } from "../../src/stream/event-stream-channel.ts";

class EventStreamBody extends Readable {
  constructor(private readonly hooks: EventStreamChannelHooks) {
    super({ highWaterMark: 16 * 1024 });
    // A consumer gone mid-stream destroys the body with an error; the pipe's owner handles it.
    this.on("error", () => {});
  }

  override _read(): void {
    this.hooks.onRead();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.readableEnded) this.hooks.onCancel();
    callback(error);
  }
}

export const createNodeEventStreamChannel: CreateEventStreamChannel = (hooks) => {
  const body = new EventStreamBody(hooks);
  let ended = false;
  return {
    body: body as unknown as BodyInit,
    push(bytes) {
      if (!ended && !body.destroyed) body.push(bytes);
    },
    queued: () => body.readableLength,
    end() {
      if (ended || body.destroyed) return;
      ended = true;
      body.push(null);
    },
    cut() {
      ended = true;
      if (!body.destroyed) body.destroy(new Error("stream cut"));
    },
  };
};
