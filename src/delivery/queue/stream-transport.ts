/**
 * The contract of a stream transport: appends one entry and says how it went, without throwing.
 * The Redis Streams transport lives in adapters/transports/redis-stream.ts; other queue backends
 * (Cloudflare Queues) implement the same interface, so the queue sink stays the same.
 */
import type { StreamEntry } from "./build-stream-entry.ts";

export type StreamAppendResult =
  | { ok: true /** The id the backend gave the entry (Redis: `<ms>-<seq>`). */; entryId: string }
  | {
      ok: false;
      /** `unreachable`: no connection; `timeout`: no answer in time; `reply`: the server refused the command. */
      failure: "unreachable" | "timeout" | "reply" | "aborted";
      /** Short, secret-free detail: an error code (`ECONNREFUSED`) or the reply's error prefix (`WRONGTYPE`). */
      detail: string;
    };

export interface StreamTransport {
  /** Appends one entry; resolves with the outcome, never rejects. */
  append(entry: StreamEntry, signal: AbortSignal): Promise<StreamAppendResult>;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

/** A typed factory per stream backend. */
export type StreamTransportFactory<Options> = (options: Options) => StreamTransport;
