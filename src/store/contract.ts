/**
 * The store contract: everything the gateway keeps durably goes through this interface.
 * Drivers live in `adapters/store/*` (memory, sqlite, redis, upstash, postgres; Durable Objects on
 * Workers) and all of them pass the same conformance suite (`test/conformance/store-conformance.ts`).
 *
 * Durability rule: a promise returned by `append` resolves only once the record would survive
 * a crash of this process (for the sqlite driver: committed with `synchronous=FULL`). The ingress path
 * acknowledges an upstream webhook only after `append` resolved.
 */
import type { GatewayEvent } from "../events/envelope.ts";
import type { FilterNode } from "../filters/parse-filter.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";

/** One recorded event as the store keeps it. */
export interface EventRecord {
  /** Gateway event id (deterministic from source id and upstream identity). */
  id: string;
  /** Position in the event log, strictly increasing per store, assigned by the driver. 0 before append. */
  seq: number;
  sourceId: string;
  /** Upstream identity (e-sign `event_id`, staffing delivery id or body hash). */
  identity: string;
  /** Receive time in epoch milliseconds. */
  receivedAt: number;
  /** The CloudEvents envelope. `data` is the parsed upstream body. */
  event: GatewayEvent;
  /**
   * The raw body exactly as received: the text itself when the bytes are valid UTF-8
   * (`rawBodyEncoding: "utf8"`, the common case, which keeps the event log small and skips an
   * encoding step on the hot path), else base64 (`rawBodyEncoding` absent or `"base64"`).
   */
  rawBody: string;
  rawBodyEncoding?: "utf8" | "base64";
  /** Received headers, lower-cased names, signature headers redacted. */
  headers: Record<string, string>;
  /** Marks: `unknown_type`, `extra_fields`, `schema_mismatch`. */
  marks: string[];
}

export type ClaimResult =
  /** The caller owns the claim and must `append` or `release`. */
  | { status: "claimed" }
  /** The identity is already recorded within the dedupe window (or still in the log). */
  | { status: "duplicate"; id: string }
  /** Another request holds an unexpired claim on the identity. */
  | { status: "in_progress" };

export interface AppendResult {
  /** False when the id was already recorded (the caller lost a race or retried). */
  inserted: boolean;
  seq: number;
}

export interface EventQuery {
  sourceId?: string;
  /** Glob on the event type: `agreement.*`, `*`, `candidate.accepted`. */
  type?: string;
  subject?: string;
  /** Matches the external id where each service declares it (`searchFields.externalId`). */
  externalId?: string;
  /** Receive time range, epoch ms, inclusive from, exclusive to. */
  from?: number;
  to?: number;
  /**
   * A parsed content filter (src/filters). Drivers with `filterPushdown` apply it in SQL (a
   * superset when the translation is inexact); the others ignore it, and `listMatching`
   * (list-matching.ts) filters their pages in memory. Plain data, so it crosses RPC.
   */
  filter?: FilterNode;
  /** Opaque cursor from a previous page (the seq to continue after, descending). */
  after?: number;
  /**
   * Lowest seq to look at (inclusive). SQL drivers bound their scan with it, so that an exact
   * filter pushed down reads a window of the log per statement (list-matching.ts); others may
   * ignore it.
   */
  minSeq?: number;
  /** Page size, 1..500. */
  limit: number;
}

export interface EventPage {
  events: EventRecord[];
  /**
   * seq of the last event of this page when at least one more matching event follows, else null
   * (exact: a non-null `next` never leads to an empty page; the conformance suite checks it).
   */
  next: number | null;
}

/**
 * The contract every store driver implements.
 * Keys passed to `claim`, `append` (dedupeKey) and `release` are `${sourceId}\u0000${identity}`.
 */
export interface StoreDriver {
  readonly name: string;
  /** True when `list` applies `query.filter` in the store (SQL drivers). Default false. */
  readonly filterPushdown?: boolean;
  /**
   * Atomically claims an upstream identity for recording. A claim expires after `claimTtlMs`
   * so that a process dying between claim and append never turns the upstream's retry into a
   * dropped duplicate.
   */
  claim(dedupeKey: string, claimTtlMs: number): Promise<ClaimResult>;
  /**
   * Durably appends the event and marks `dedupeKey` as recorded for `dedupeTtlMs`, replacing the
   * claim. Idempotent on `record.id`. Resolves only once durable. Rejects when the store cannot
   * record right now (the caller answers 503).
   */
  append(record: EventRecord, dedupeKey: string, dedupeTtlMs: number): Promise<AppendResult>;
  /** Drops a claim that will not be followed by an append (e.g. a failed request). */
  release(dedupeKey: string): Promise<void>;
  /** One event by gateway id. */
  get(id: string): Promise<EventRecord | undefined>;
  /** Events newest first, filtered, paginated by seq. */
  list(query: EventQuery): Promise<EventPage>;
  /**
   * Events with seq > `afterSeq` in ascending seq order, at most `limit`, optionally filtered
   * (cursor and limit fields of the query are ignored). The event log read used by the outbox and
   * by live-stream resume.
   */
  readAfter(afterSeq: number, limit: number, filter?: Omit<EventQuery, "after" | "limit">): Promise<EventRecord[]>;
  /** The highest seq recorded so far (0 when empty). */
  lastSeq(): Promise<number>;
  /** Removes events received before `before` (epoch ms) and expired dedupe marks; returns the count. */
  purge(before: number): Promise<number>;
  /**
   * Removes the events with these ids (with their index entries); unknown ids are ignored.
   * Dedupe marks stay until their window ends. Returns how many were removed. Used by
   * per-type retention (src/lifecycle/apply-retention.ts).
   */
  removeEvents(ids: readonly string[]): Promise<number>;
  /**
   * Replaces recorded events in place by id (same seq, same position in the log), leaving no
   * copy of the old content in the store's tables or keys; unknown ids are ignored. Returns how
   * many were replaced. Used by erasure (src/lifecycle/erase-events.ts), which writes tombstones
   * and rewrites gateway events whose `last_error` quoted an erased event.
   */
  redactEvents(records: readonly EventRecord[]): Promise<number>;
  /**
   * Optional: after an erasure, makes sure no copy of what it replaced or deleted stays in the
   * store's files either: events replaced by `redactEvents`, delivery records of the outbox on
   * the same database replaced by `saveDeliveries` (attempt texts scrubbed), and `kv` values
   * deleted (the erasure request, which held a filter's values). SQLite: secure_delete already
   * zeroed the pages, the write-ahead log is checkpointed and truncated; a PostgreSQL driver
   * would VACUUM those tables (an UPDATE leaves the old row version behind). Called once per
   * erasure, not per batch.
   */
  compact?(): Promise<void>;
  /** Throws when the store is unreachable. */
  ping(): Promise<void>;
  /**
   * Small shared values with a TTL (token cache, locks, erasure requests in progress). `kvSet`
   * and `kvDelete` resolve once durable: an erasure is recorded through them before it is applied.
   */
  kvGet(key: string): Promise<string | undefined>;
  kvSet(key: string, value: string, ttlMs: number): Promise<void>;
  /** Sets only when absent (or expired); true when set. Used as a short lock. */
  kvSetIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  kvDelete(key: string): Promise<void>;
  /** Flushes pending writes and releases resources. */
  close(): Promise<void>;
}

/**
 * What the runtime hands every store driver besides its own options: the gateway's upstream
 * services, whose declared search fields (`searchFields`) the driver indexes
 * (match-event-query.ts `createEventSummarizer`). The composition roots pass the configured
 * registry (adapters/store/registry.ts `openConfiguredStore`, the Workers store); a driver
 * opened without it indexes no external id.
 */
export interface StoreWiring {
  /** The upstream services of the gateway. Default: none (no event has an external id). */
  services?: ServiceRegistry;
}

/** A typed factory per driver, as unstorage and crossws adapters do. */
export type StoreFactory<Options> = (options: Options) => StoreDriver | Promise<StoreDriver>;

/** Thrown by drivers when a write could not be made durable; answered as 503. */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}

/** Builds the dedupe key of an upstream identity within a source. */
export function toDedupeKey(sourceId: string, identity: string): string {
  return `${sourceId}\u0000${identity}`;
}
