/**
 * How a WebSocket subscriber's message is read, on every runtime (Node's crossws peer, the
 * Workers hibernatable socket): at most MAX_CLIENT_MESSAGE_LENGTH characters of JSON, checked
 * against the client message schema; anything else is answered with one non-fatal
 * `invalid_request` frame naming the first issues.
 */
import * as v from "valibot";
import { type ClientMessage, ClientMessageSchema, errorFrame } from "./stream-frames.ts";

/** Largest client message accepted, in characters. */
export const MAX_CLIENT_MESSAGE_LENGTH = 16 * 1024;

/** The message, or the error frame to send back. */
export type ParsedClientMessage = { ok: true; message: ClientMessage } | { ok: false; errorFrame: string };

/** Parses one text message of a subscriber. */
export function parseClientMessage(text: string): ParsedClientMessage {
  let input: unknown;
  try {
    input = text.length <= MAX_CLIENT_MESSAGE_LENGTH ? JSON.parse(text) : undefined;
  } catch {
    input = undefined;
  }
  const parsed = v.safeParse(ClientMessageSchema, input);
  if (parsed.success) return { ok: true, message: parsed.output };
  return {
    ok: false,
    errorFrame: errorFrame("invalid_request", "invalid message (expected subscribe, unsubscribe or ping JSON)", false, {
      issues: parsed.issues.slice(0, 5).map((issue) => ({ path: v.getDotPath(issue), message: issue.message })),
    }),
  };
}
