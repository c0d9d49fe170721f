/**
 * W3C Trace Context values as the gateway accepts them: a `traceparent` from a request or a
 * recorded event is used only when well formed (a malformed one starts a new trace, as the W3C
 * spec says), and the CloudEvents distributed-tracing extension keeps it on the event.
 */

import type { GatewayEvent } from "../events/envelope.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import type { TraceHeaders } from "./tracing-port.ts";

// W3C Trace Context (docs/tracing.md#context-that-survives-the-store): version-traceid-parentid-flags, lower-case
// hex. Version 00 is exactly these 55 characters; version ff is invalid; a later version may append
// `-`-separated fields after the same first four, which a version-00 participant reads and passes
// on as version 00 (the only flag it knows is "sampled").
const TRACEPARENT_00 = /^([0-9a-f]{2})-((?!0{32})[0-9a-f]{32})-((?!0{16})[0-9a-f]{16})-([0-9a-f]{2})$/;
const TRACEPARENT_LENGTH = 55;
/** Longest `traceparent` looked at (a later version's extra fields included). */
const MAX_TRACEPARENT_LENGTH = 256;
// tracestate list-members: `key=value`; key `[a-z0-9][_0-9a-z-*/]{0,255}` or `tenant@system`;
// value printable ASCII without `,` and `=`, not ending in a space, at most 256 characters.
const TRACESTATE_KEY = /^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
/** At most 32 list-members, and the whole value within 512 characters (kept whole or dropped). */
const MAX_TRACESTATE_MEMBERS = 32;
const MAX_TRACESTATE_LENGTH = 512;

/**
 * The version-00 `traceparent` a header value stands for, or undefined when it is not a valid
 * one: version 00 must be exactly 55 characters; a later version (01..fe) is read as its first
 * four fields (followed by the end or a `-`) and given as version 00 with only the sampled flag.
 */
export function parseTraceparent(value: string | null | undefined): string | undefined {
  if (typeof value !== "string" || value.length < TRACEPARENT_LENGTH || value.length > MAX_TRACEPARENT_LENGTH) {
    return undefined;
  }
  const version = value.slice(0, 2);
  if (version === "00") return TRACEPARENT_00.test(value) ? value : undefined;
  if (version === "ff" || (value.length > TRACEPARENT_LENGTH && value[TRACEPARENT_LENGTH] !== "-")) return undefined;
  const match = TRACEPARENT_00.exec(value.slice(0, TRACEPARENT_LENGTH));
  if (!match) return undefined;
  const sampled = Number.parseInt(match[4] as string, 16) & 1;
  return `00-${match[2]}-${match[3]}-0${sampled}`;
}

/** True for a valid version-00 `traceparent`, exactly as it would be stored or sent. */
export function isTraceparent(value: string | null | undefined): value is string {
  return typeof value === "string" && parseTraceparent(value) === value;
}

/**
 * A `tracestate` header value when it is a valid W3C list (empty members allowed, no duplicate
 * keys, at most 32 members and 512 characters), else undefined: an invalid one is dropped whole.
 */
export function parseTracestate(value: string | null | undefined): string | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_TRACESTATE_LENGTH) return undefined;
  const keys = new Set<string>();
  const members: string[] = [];
  for (const raw of value.split(",")) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, "");
    if (member === "") continue;
    const eq = member.indexOf("=");
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(eq + 1)) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  return members.join(",");
}

/** A trace context from a `traceparent` and `tracestate` pair, or undefined without a valid `traceparent`. */
export function toTraceHeaders(traceparent: unknown, tracestate: unknown): TraceHeaders | undefined {
  const parent = typeof traceparent === "string" ? parseTraceparent(traceparent) : undefined;
  if (!parent) return undefined;
  const state = typeof tracestate === "string" ? parseTracestate(tracestate) : undefined;
  return state ? { traceparent: parent, tracestate: state } : { traceparent: parent };
}

/** The trace context a request carries, or undefined when it has no valid `traceparent`. */
export function readTraceHeaders(headers: HeaderReader): TraceHeaders | undefined {
  return toTraceHeaders(headers.get("traceparent"), headers.get("tracestate"));
}

/** Keeps `context` on the event as the CloudEvents distributed-tracing extension attributes. */
export function attachTraceContext(event: GatewayEvent, context: TraceHeaders | undefined): void {
  if (!context?.traceparent) return;
  event.traceparent = context.traceparent;
  if (context.tracestate) event.tracestate = context.tracestate;
}

/** Adds `traceparent`/`tracestate` of `context` to a header record (no-op without one). */
export function setTraceHeaders(headers: Record<string, string>, context: TraceHeaders | undefined): void {
  if (!context?.traceparent) return;
  headers.traceparent = context.traceparent;
  if (context.tracestate) headers.tracestate = context.tracestate;
}
