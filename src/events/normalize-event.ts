/**
 * Normalizes one verified delivery into a CloudEvents envelope: parses the body (only after the
 * signature was verified), asks the source's service (src/services/) for the upstream identity,
 * event type, subject, time and schema marks, and derives the gateway id. Marks never reject:
 * upstreams add fields and event types.
 */

import type { SourceConfig } from "../config/schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import { MAX_JSON_DEPTH, parseBoundedJson } from "../encoding/json-depth.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import { serviceOfSource } from "../services/lookup-service.ts";
import { builtinServices } from "../services/registry.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { GatewayEvent } from "./envelope.ts";
import { deriveEventId } from "./event-id.ts";

export interface NormalizeInput {
  source: SourceConfig;
  rawBody: Uint8Array;
  /** The body already decoded as UTF-8, when the caller has it (saves a second decode). */
  text?: string;
  headers: HeaderReader;
  receivedAt: number;
  /** Where the source's service is looked up. Default the built-in services. */
  services?: ServiceRegistry;
}

export type NormalizeResult =
  | { ok: true; event: GatewayEvent; identity: string; marks: string[] }
  | { ok: false; message: string };

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });
/** Parses the raw body as a JSON object (nested at most MAX_JSON_DEPTH deep); undefined for anything else. */
function parseJsonObject(rawBody: Uint8Array, text: string | undefined): Record<string, unknown> | undefined {
  try {
    // The stored text keeps a leading BOM (lossless); JSON.parse must not see it.
    const json = text === undefined ? decoder.decode(rawBody) : text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const value: unknown = parseBoundedJson(json);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function toTime(candidate: unknown, fallback: string): string {
  if (typeof candidate !== "string") return fallback;
  const ms = Date.parse(candidate);
  return Number.isNaN(ms) ? fallback : new Date(ms).toISOString();
}

/** Builds the envelope of one verified delivery, or says why the body cannot be accepted. */
export async function normalizeEvent(input: NormalizeInput, crypto: CryptoPort): Promise<NormalizeResult> {
  const body = parseJsonObject(input.rawBody, input.text);
  if (!body)
    return { ok: false, message: `the body is not a JSON object nested at most ${MAX_JSON_DEPTH} levels deep` };
  const receivedTime = new Date(input.receivedAt).toISOString();
  const { source } = input;
  const service = serviceOfSource(input.services ?? builtinServices, source);
  const facts = await service.describeEvent(body, input, crypto);
  if (!facts.ok) return facts;
  const { identity, type, marks } = facts;

  const event: GatewayEvent = {
    specversion: "1.0",
    id: await deriveEventId(source.id, identity, crypto),
    source: `/webhooks/${source.id}`,
    type: type ?? "unknown",
    time: toTime(facts.time, receivedTime),
    datacontenttype: "application/json",
    data: body,
    service: source.service,
    upstreamid: identity,
    upstreamidkind: facts.identityKind,
    receivedtime: receivedTime,
  };
  if (facts.subject) event.subject = facts.subject;
  return { ok: true, event, identity, marks };
}
