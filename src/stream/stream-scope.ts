/**
 * What a live-stream subscriber may see. The client's configured `scopes.stream` is the outer
 * bound (absent: nothing); a JWT may carry a `stream` claim (`{sources, types, subjects, filter}`) that
 * narrows it further and can never widen it, because both are applied. A requested filter is
 * accepted only when each pattern it names lies within every applicable scope list.
 */
import type { JWTPayload } from "jose";
import * as v from "valibot";
import type { ClientPrincipal } from "../auth/authenticate-client.ts";
import { type StreamScope, StreamScopeSchema } from "../config/clients-schema.ts";
import type { EventRecord } from "../store/contract.ts";
import {
  compileStreamFilter,
  FILTER_DIMENSIONS,
  type FilterDimension,
  isPatternWithin,
  matchesEverything,
  type StreamFilter,
} from "./stream-filter.ts";

/** A scope restated as a filter (`sources` → `source`, ...). */
export type ScopeLayer = StreamFilter;

export type StreamScopeResult =
  | { ok: true; layers: ScopeLayer[] }
  | { ok: false; code: "forbidden" | "unauthorized"; message: string };

/** The claim a stream token carries; also accepted from any JWT of the client. */
export const STREAM_CLAIM = "stream";

function toLayer(scope: StreamScope): ScopeLayer {
  return { source: scope.sources, type: scope.types, subject: scope.subjects, filter: scope.filter };
}

/** The scope layers of a principal, outermost first; refuses clients without stream access. */
export function streamScopeOf(principal: ClientPrincipal): StreamScopeResult {
  const configured = principal.client.scopes.stream;
  if (!configured) {
    return { ok: false, code: "forbidden", message: "this client may not subscribe to the live stream" };
  }
  const layers = [toLayer(configured)];
  const claim = (principal.claims as JWTPayload | undefined)?.[STREAM_CLAIM];
  if (claim !== undefined) {
    const parsed = v.safeParse(StreamScopeSchema, claim);
    if (!parsed.success) {
      return { ok: false, code: "unauthorized", message: "the token's stream claim is malformed" };
    }
    layers.push(toLayer(parsed.output));
  }
  return { ok: true, layers };
}

export interface ScopeViolation {
  dimension: FilterDimension;
  pattern: string;
}

/** The patterns of `filter` that some scope layer does not cover (empty: the filter is allowed). */
export function findScopeViolations(layers: readonly ScopeLayer[], filter: StreamFilter): ScopeViolation[] {
  const out: ScopeViolation[] = [];
  for (const dimension of FILTER_DIMENSIONS) {
    for (const pattern of filter[dimension] ?? []) {
      const covered = layers.every((layer) => {
        const allowed = layer[dimension];
        return allowed === undefined || allowed.some((outer) => isPatternWithin(pattern, outer));
      });
      if (!covered) out.push({ dimension, pattern });
    }
  }
  return out;
}

/** One predicate for all layers: an event is visible when every layer matches it. */
export function compileScope(layers: readonly ScopeLayer[]): (record: EventRecord) => boolean {
  const restricting = layers.filter((layer) => layer.source || layer.type || layer.subject || layer.filter);
  if (restricting.length === 0) return matchesEverything;
  const compiled = restricting.map(compileStreamFilter);
  return (record) => {
    for (let i = 0; i < compiled.length; i++) if (!(compiled[i] as (r: EventRecord) => boolean)(record)) return false;
    return true;
  };
}

/** Narrows a scope by the filter a token was asked for: the claim to put in the token. */
export function toStreamClaim(filter: StreamFilter): StreamScope {
  const claim: StreamScope = {};
  if (filter.source) claim.sources = filter.source;
  if (filter.type) claim.types = filter.type;
  if (filter.subject) claim.subjects = filter.subject;
  if (filter.filter) claim.filter = filter.filter;
  return claim;
}
