/**
 * The wire format of the live stream, shared by WebSocket and SSE: every server frame is one
 * JSON object with a `type` (`ready`, `event`, `heartbeat`, `subscribed`, `unsubscribed`,
 * `pong`, `error`); SSE carries the same JSON in `data:` and the cursor of event frames in
 * `id:`. Client messages (WebSocket only) are validated here with valibot.
 */
import * as v from "valibot";
import type { EventRecord } from "../store/contract.ts";
import { formatCursor } from "./stream-cursor.ts";
import { type StreamFilter, StreamFilterSchema } from "./stream-filter.ts";

/** Stable codes of error frames. */
export type StreamErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "token_expired"
  | "forbidden"
  | "not_found"
  | "cursor_expired"
  | "cursor_ahead"
  | "slow_consumer"
  | "idle_timeout"
  | "store_unavailable"
  | "shutting_down";

/** WebSocket close code per fatal error (reason: the error code). */
export const CLOSE_CODES: Record<StreamErrorCode, number> = {
  invalid_request: 4000,
  unauthorized: 4001,
  token_expired: 4001,
  forbidden: 4003,
  not_found: 4004,
  slow_consumer: 4008,
  cursor_expired: 4010,
  cursor_ahead: 4010,
  idle_timeout: 4002,
  store_unavailable: 1011,
  shutting_down: 1001,
};

const subscriptionId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, "a subscription id of 1..64 letters, digits, _ . : -"),
);

/** Messages a WebSocket client may send. */
export const ClientMessageSchema = v.variant("type", [
  v.strictObject({
    type: v.literal("subscribe"),
    /** Replaces the subscription with this id. Default `default`. */
    id: v.optional(subscriptionId, "default"),
    filter: v.optional(StreamFilterSchema, {}),
  }),
  v.strictObject({ type: v.literal("unsubscribe"), id: v.optional(subscriptionId, "default") }),
  v.strictObject({ type: v.literal("ping") }),
]);

export type ClientMessage = v.InferOutput<typeof ClientMessageSchema>;

/** The event frame of a record; `eventJson` replaces the event (a stream destination's transform). */
export function eventFrame(record: EventRecord, eventJson = JSON.stringify(record.event)): string {
  return `{"type":"event","cursor":"${formatCursor(record.seq)}","event":${eventJson}}`;
}

export interface ReadyFrame {
  cursor: number;
  subscriptions: Record<string, StreamFilter>;
  heartbeatMs: number;
  expiresAt?: number;
}

/** The first frame of every accepted connection. */
export function readyFrame(ready: ReadyFrame): string {
  return JSON.stringify({
    type: "ready",
    cursor: formatCursor(ready.cursor),
    subscriptions: ready.subscriptions,
    heartbeatMs: ready.heartbeatMs,
    expiresAt: ready.expiresAt === undefined ? null : new Date(ready.expiresAt).toISOString(),
  });
}

let lastHeartbeat = { cursor: -1, now: Number.NaN, frame: "" };

/**
 * A heartbeat; `cursor` is a valid resume point (every matching event up to it was sent). One
 * heartbeat turn gives every subscriber the same `now` and, when they are live, the same cursor:
 * the last frame is remembered, so the turn builds it once and the transport can reuse its bytes
 * (the Node text sender encodes a frame once while the same string goes to many peers).
 */
export function heartbeatFrame(cursor: number, now: number): string {
  if (cursor === lastHeartbeat.cursor && now === lastHeartbeat.now) return lastHeartbeat.frame;
  const frame = JSON.stringify({ type: "heartbeat", cursor: formatCursor(cursor), time: new Date(now).toISOString() });
  lastHeartbeat = { cursor, now, frame };
  return frame;
}

/** An error frame; `fatal` frames are followed by the end of the connection. */
export function errorFrame(code: StreamErrorCode, message: string, fatal: boolean, details?: unknown): string {
  return JSON.stringify(
    details === undefined ? { type: "error", code, message, fatal } : { type: "error", code, message, fatal, details },
  );
}

/** Any other frame (`subscribed`, `unsubscribed`, `pong`). */
export function controlFrame(type: "subscribed" | "unsubscribed" | "pong", fields: Record<string, unknown> = {}) {
  return JSON.stringify({ type, ...fields });
}
