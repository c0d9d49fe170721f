/**
 * The Live view's connection to `/ws` (docs/live-stream.md): authenticates with a stream token
 * from `POST /auth/stream-token` when the gateway mints them, else with the key itself as
 * `?token=`; keeps the cursor of the last frame and, after a dropped connection or a pause,
 * reconnects with `?since=<cursor>` so every missed event arrives once, in order.
 */
import { callApi } from "./api.ts";
import { hasFeature } from "./features.ts";
import { readKey } from "./session.ts";
import type { CloudEvent } from "./types.ts";

export interface LiveFilters {
  source: string[];
  type: string[];
  subject: string[];
  /** A content filter as JSON text (docs/filters.md); empty for none. */
  filter: string;
}

export type LiveStatus =
  | { state: "connecting" }
  | { state: "live" }
  | { state: "paused" }
  | { state: "reconnecting"; inSeconds: number }
  | { state: "refused"; message: string };

export interface LiveHandlers {
  onEvent(event: CloudEvent, cursor: string): void;
  onStatus(status: LiveStatus): void;
  /** The cursor could no longer be served (retention); the list starts over from now. */
  onReset(reason: string): void;
}

// Close codes after which retrying with the same credential cannot help (docs/live-stream.md,
// close codes).
const REFUSED = new Set([4000, 4003, 4004]);
const MAX_BACKOFF_SECONDS = 10;

/** One live subscription; `start`, `pause`, `resume`, `stop`. */
export class LiveConnection {
  private socket?: WebSocket;
  private cursor?: string;
  private token?: string;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private failures = 0;
  private stopped = true;

  constructor(
    private readonly filters: LiveFilters,
    private readonly handlers: LiveHandlers,
  ) {}

  /** Connects (from now, or from the last cursor after a pause). */
  start(): void {
    this.stopped = false;
    void this.connect();
  }

  /** Closes the connection but keeps the cursor: `resume` delivers what arrived meanwhile. */
  pause(): void {
    this.close();
    this.handlers.onStatus({ state: "paused" });
  }

  resume(): void {
    this.start();
  }

  stop(): void {
    this.close();
  }

  private close(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(1000, "closed by the console");
  }

  private async credential(): Promise<string> {
    if (this.token) return this.token;
    // Without a JWT secret the gateway mints no tokens (404): the key itself is the credential,
    // as docs/live-stream.md allows for browsers. Asking anyway would log a failed request.
    if (!hasFeature("stream-tokens")) return readKey() ?? "";
    try {
      const minted = await callApi<{ token: string }>("/auth/stream-token", {
        method: "POST",
        body: { ttlSeconds: 3600 },
      });
      this.token = minted.token;
      return minted.token;
    } catch {
      // A key that is not a stream client's may not mint: the key itself is the credential.
      return readKey() ?? "";
    }
  }

  private async connect(): Promise<void> {
    this.handlers.onStatus({ state: "connecting" });
    const token = await this.credential();
    if (this.stopped) return;
    const url = new URL("/ws", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("token", token);
    for (const dimension of ["source", "type", "subject"] as const) {
      for (const value of this.filters[dimension]) url.searchParams.append(dimension, value);
    }
    if (this.filters.filter) url.searchParams.set("filter", this.filters.filter);
    if (this.cursor) url.searchParams.set("since", this.cursor);
    const socket = new WebSocket(url);
    this.socket = socket;
    let refusal: string | undefined;
    let refusalCode: string | undefined;
    socket.onmessage = (message) => {
      if (socket !== this.socket) return;
      const frame = JSON.parse(String(message.data)) as {
        type: string;
        cursor?: string;
        event?: CloudEvent;
        code?: string;
        message?: string;
      };
      if (frame.type === "ready") {
        this.failures = 0;
        this.handlers.onStatus({ state: "live" });
      }
      if (frame.type === "event" && frame.event && frame.cursor) this.handlers.onEvent(frame.event, frame.cursor);
      if (frame.type === "error") {
        refusal = `${frame.message ?? frame.code} (${frame.code})`;
        refusalCode = frame.code;
      }
      if (frame.type === "error" && frame.code === "token_expired") this.token = undefined;
      if (frame.cursor) this.cursor = frame.cursor;
    };
    socket.onclose = (event) => {
      if (socket !== this.socket || this.stopped) return;
      this.socket = undefined;
      if (event.code === 4010) {
        this.cursor = undefined;
        this.handlers.onReset(refusal ?? "the cursor expired");
      }
      if (REFUSED.has(event.code) || (event.code === 4001 && refusalCode !== "token_expired")) {
        this.stopped = true;
        this.handlers.onStatus({ state: "refused", message: refusal ?? `closed with code ${event.code}` });
        return;
      }
      this.scheduleRetry();
    };
  }

  private scheduleRetry(): void {
    const inSeconds = Math.min(MAX_BACKOFF_SECONDS, 2 ** this.failures);
    this.failures++;
    this.handlers.onStatus({ state: "reconnecting", inSeconds });
    this.retryTimer = setTimeout(() => void this.connect(), inSeconds * 1000);
  }
}

/** Splits a comma-separated filter field into patterns. */
export function splitPatterns(value: string | null): string[] {
  return (value ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}
