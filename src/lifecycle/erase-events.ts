/**
 * Erasure on request (a data subject's right to erasure): every event a selection matches is
 * replaced in the store by a tombstone that keeps only what dedupe and the log's order need (id,
 * seq, source, upstream identity, type, subject, times); its body, raw bytes, headers and
 * envelope data go. Every copy derived from those events goes too: the delivery records lose the
 * texts that may quote them (attempt errors, transform console lines; pending deliveries are
 * cancelled), operational events that quoted such an error lose it, cached enrichments are
 * dropped. An audit record (`gateway.events.erased`: who, when, how many, the subject and a keyed
 * hash of the selection, never a filter's values) is recorded as a gateway event.
 *
 * Crash-safe: the request is recorded in the store (`kv`) before anything is erased, with its
 * progress page by page, and a gateway that stopped in the middle finishes it (and audits it,
 * once) when it starts again. The same selection asked again is idempotent: what it finds erased
 * already is counted, not audited again. A dry run only counts (docs/data-lifecycle.md).
 */
import type { DeliveriesErased } from "../delivery/delivery-engine.ts";
import type { Enricher } from "../enrich/create-enricher.ts";
import { parseEventFilter } from "../filters/event-filter.ts";
import type { Logger } from "../ops/logger.ts";
import type { EventQuery, EventRecord, StoreDriver } from "../store/contract.ts";
import { ERASED_MARK, isErased } from "../store/erased-event.ts";
import { listMatching } from "../store/list-matching.ts";
import { createSlicer } from "../store/yield-slices.ts";
import { GATEWAY_SOURCE_ID, type GatewayEventDeps, recordGatewayEvent } from "./gateway-events.ts";
import { scrubOperationalData } from "./scrub-operational-data.ts";

const PAGE = 200;
/** The store's `kv` keys of erasure: the requests not finished yet, and the key of the selection hashes. */
const PENDING_KEY = "lifecycle:erasures";
const HASH_KEY = "lifecycle:erasure-hash-key";
const LOCK_KEY = "lifecycle:erasures:lock";
/** The lock outlives no holder by more than this; a taker waits at most about LOCK_TRIES × 20 ms. */
const LOCK_TTL_MS = 10_000;
const LOCK_TRIES = 1000;
/** How long an unfinished request is kept (a gateway that never starts again) and the hash key. */
const PENDING_TTL_MS = 400 * 86_400_000;
const HASH_KEY_TTL_MS = 100 * 365 * 86_400_000;
/** The gateway events that may quote an attempt's error (scrub-operational-data.ts). */
const QUOTING_TYPES = ["gateway.destination.failing", "gateway.deliveries.dead"];

/** What was asked: a subject and/or content filters (the body of `POST /events/erase`). */
export interface EraseSelection {
  /** The CloudEvent subject whose events are erased. */
  subject?: string;
  /** A content filter (docs/filters.md). */
  filter?: unknown;
  /** CloudEvents Subscriptions dialect expressions. */
  filters?: unknown;
}

export interface EraseDeps extends GatewayEventDeps {
  store: StoreDriver;
  logger?: Logger;
  /**
   * Erasure's share of the delivery records and of what watches them (the delivery engine's
   * `eraseDeliveries` plus the operational events' memory; on Workers, the delivery object's).
   */
  eraseDeliveries?: (eventIds: readonly string[]) => Promise<DeliveriesErased>;
  enricher?: Pick<Enricher, "clear">;
}

export interface EraseReport {
  dryRun: boolean;
  /** Events erased by this request (or that a run would erase). */
  events: number;
  /** Matching events that were erased before. */
  already_erased: number;
  /** Pending deliveries cancelled. */
  deliveries_cancelled: number;
  /** Id of the audit record (`gateway.events.erased`), absent in a dry run. */
  audit_event_id?: string;
}

/** An erasure recorded before it is applied, with its progress (in the store's `kv`). */
interface ErasureRequest {
  /** The keyed hash of the selection (`hmac-sha256:<hex>`): the same selection, the same id. */
  id: string;
  selection: EraseSelection;
  by: string;
  /** When it was asked (epoch ms); also the `erasedtime` of its tombstones. */
  at: number;
  /** Counted by the pages done. */
  events: number;
  alreadyErased: number;
  cancelled: number;
  /** The page being erased: its ids and the cursor after it (null: the last page). */
  page?: { ids: string[]; next: number | null };
  /** Set when a restart found it unfinished. */
  resumed?: boolean;
}

/** The tombstone that replaces `record`: identity and order kept, content gone. */
export function toTombstone(record: EventRecord, erasedAt: number): EventRecord {
  const { data: _data, enrichment: _enrichment, enrichmenterror: _error, ...attributes } = record.event;
  return {
    id: record.id,
    seq: record.seq,
    sourceId: record.sourceId,
    identity: record.identity,
    receivedAt: record.receivedAt,
    event: { ...attributes, data: null, erasedtime: new Date(erasedAt).toISOString() } as EventRecord["event"],
    rawBody: "",
    rawBodyEncoding: "utf8",
    headers: {},
    marks: [ERASED_MARK],
  };
}

/** The store query of a selection (a filter that does not parse was refused at the API). */
function queryOf(selection: EraseSelection): Omit<EventQuery, "after" | "limit"> {
  const parsed = parseEventFilter(selection);
  if (!parsed.ok) throw new Error("the erasure's filter does not parse");
  return { subject: selection.subject, filter: parsed.filter?.node };
}

/** JSON with object keys sorted: one text per selection, whatever the order it was written in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The key of the selection hashes: random, made once per store and kept in it. */
async function hashKey(store: StoreDriver): Promise<string> {
  const existing = await store.kvGet(HASH_KEY);
  if (existing) return existing;
  const fresh = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
  await store.kvSetIfAbsent(HASH_KEY, fresh, HASH_KEY_TTL_MS);
  return (await store.kvGet(HASH_KEY)) ?? fresh;
}

/** `hmac-sha256:<hex>` of the selection under the store's hash key. */
async function selectionHash(deps: EraseDeps, selection: EraseSelection): Promise<string> {
  const key = await hashKey(deps.store);
  const text = canonical({ subject: selection.subject, filter: selection.filter, filters: selection.filters });
  const mac = await deps.crypto.signHmacSha256(key, [new TextEncoder().encode(text)]);
  return `hmac-sha256:${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

async function readPending(store: StoreDriver): Promise<ErasureRequest[]> {
  const text = await store.kvGet(PENDING_KEY);
  return text ? (JSON.parse(text) as ErasureRequest[]) : [];
}

/** A request's progress key: written once per page without the list's lock (one write, one sync). */
const progressKey = (id: string) => `${PENDING_KEY}:${id}`;

/** The pending requests with their latest progress. */
async function readPendingWithProgress(store: StoreDriver): Promise<ErasureRequest[]> {
  const list = await readPending(store);
  return Promise.all(
    list.map(async (request) => {
      const progress = await store.kvGet(progressKey(request.id));
      return progress ? (JSON.parse(progress) as ErasureRequest) : request;
    }),
  );
}

/** Takes the short lock of the pending list (instances sharing a store take turns); its token. */
async function lockPending(store: StoreDriver): Promise<string> {
  const token = crypto.randomUUID();
  for (let i = 0; i < LOCK_TRIES; i++) {
    if (await store.kvSetIfAbsent(LOCK_KEY, token, LOCK_TTL_MS)) return token;
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20));
  }
  throw new Error("the list of erasures stayed locked; retried at the next start");
}

/** Read-modify-write of the pending list: one at a time in this process, under the lock across instances. */
let pendingChain: Promise<unknown> = Promise.resolve();
function updatePending(store: StoreDriver, change: (list: ErasureRequest[]) => ErasureRequest[]): Promise<void> {
  const next = pendingChain.then(async () => {
    const token = await lockPending(store);
    try {
      const list = change(await readPending(store));
      if (list.length === 0) await store.kvDelete(PENDING_KEY);
      else await store.kvSet(PENDING_KEY, JSON.stringify(list), PENDING_TTL_MS);
    } finally {
      if ((await store.kvGet(LOCK_KEY)) === token) await store.kvDelete(LOCK_KEY);
    }
  });
  pendingChain = next.catch(() => {});
  return next;
}
const saveRequest = (store: StoreDriver, request: ErasureRequest) =>
  updatePending(store, (list) => [...list.filter((r) => r.id !== request.id), request]);

/** Erasures running in this process, by selection hash: a second request joins the first. */
const running = new WeakMap<StoreDriver, Map<string, Promise<EraseReport>>>();
function runningOf(store: StoreDriver): Map<string, Promise<EraseReport>> {
  let map = running.get(store);
  if (!map) {
    map = new Map();
    running.set(store, map);
  }
  return map;
}

/** Erases (or counts, with `dryRun`) the events `selection` matches; `actor` names who asked. */
export async function eraseEvents(
  deps: EraseDeps,
  selection: EraseSelection,
  options: { dryRun: boolean; actor: string },
): Promise<EraseReport> {
  const query = queryOf(selection);
  if (options.dryRun) return countMatching(deps.store, query);
  const id = await selectionHash(deps, selection);
  const map = runningOf(deps.store);
  const joined = map.get(id);
  if (joined) return joined;
  const request: ErasureRequest = {
    id,
    selection,
    by: options.actor,
    at: deps.clock.now(),
    events: 0,
    alreadyErased: 0,
    cancelled: 0,
  };
  const run = (async () => {
    // Recorded before anything is erased: a crash from here on is finished at the next start.
    await saveRequest(deps.store, request);
    return applyErasure(deps, request);
  })();
  map.set(id, run);
  try {
    return await run;
  } finally {
    map.delete(id);
  }
}

/**
 * Finishes the erasures a stopped gateway left unfinished (called at start; on Workers by the
 * cron trigger). Resolves with how many it finished.
 */
export async function resumeErasures(deps: EraseDeps): Promise<number> {
  const pending = await readPendingWithProgress(deps.store);
  const map = runningOf(deps.store);
  let finished = 0;
  for (const request of pending) {
    if (map.has(request.id)) continue;
    const run = applyErasure(deps, { ...request, resumed: true });
    map.set(request.id, run);
    try {
      await run;
      finished++;
    } finally {
      map.delete(request.id);
    }
  }
  return finished;
}

async function countMatching(store: StoreDriver, query: Omit<EventQuery, "after" | "limit">): Promise<EraseReport> {
  let events = 0;
  let alreadyErased = 0;
  let after: number | undefined;
  const pause = createSlicer();
  for (let pages = 0; pages < 1_000_000; pages++) {
    const page = await listMatching(store, { ...query, after, limit: PAGE }, Number.POSITIVE_INFINITY, pause);
    await pause();
    for (const record of page.events) {
      if (isErased(record)) alreadyErased++;
      else events++;
    }
    if (page.next === null) break;
    after = page.next;
  }
  return { dryRun: true, events, already_erased: alreadyErased, deliveries_cancelled: 0 };
}

/** Applies a recorded request from where its progress says, then scrubs, audits and forgets it. */
async function applyErasure(deps: EraseDeps, request: ErasureRequest): Promise<EraseReport> {
  const { store } = deps;
  const query = queryOf(request.selection);
  const erasedtime = new Date(request.at).toISOString();
  const erasedIds = new Set<string>();
  const texts = new Set<string>();
  const progress = { ...request };

  /** Erases one page of records (those not erased yet) and scrubs what derives from all of them. */
  const erasePage = async (records: EventRecord[], next: number | null) => {
    const fresh = records.filter((r) => !isErased(r));
    // Events erased by this very request before a restart count as its own.
    const mine = records.filter((r) => isErased(r) && (r.event as { erasedtime?: string }).erasedtime === erasedtime);
    const before = records.length - fresh.length - mine.length;
    // The intent first: a crash during this page is finished from it.
    progress.page = { ids: records.map((r) => r.id), next };
    if (fresh.length > 0) await store.kvSet(progressKey(request.id), JSON.stringify(progress), PENDING_TTL_MS);
    if (fresh.length > 0) await store.redactEvents(fresh.map((r) => toTombstone(r, request.at)));
    // Every matching event's records are scrubbed, also those erased before (by an older gateway).
    const ids = records.map((r) => r.id);
    if (ids.length > 0 && deps.eraseDeliveries) {
      const erased = await deps.eraseDeliveries(ids);
      progress.cancelled += erased.cancelled;
      for (const text of erased.texts) texts.add(text);
    }
    for (const id of ids) erasedIds.add(id);
    progress.events += fresh.length + mine.length;
    progress.alreadyErased += before;
  };

  // A page that was being erased when the gateway stopped: its events, whatever they match now.
  let after: number | undefined;
  let done = false;
  if (request.page) {
    const records = (await Promise.all(request.page.ids.map((id) => store.get(id)))).filter(
      (r): r is EventRecord => r !== undefined,
    );
    await erasePage(records, request.page.next);
    if (request.page.next === null) done = true;
    else after = request.page.next;
  }
  const pause = createSlicer();
  for (let pages = 0; !done && pages < 1_000_000; pages++) {
    const page = await listMatching(store, { ...query, after, limit: PAGE }, Number.POSITIVE_INFINITY, pause);
    await pause();
    await erasePage(page.events, page.next);
    if (page.next === null) break;
    after = page.next;
  }
  progress.page = undefined;

  const gatewayEventsScrubbed = erasedIds.size > 0 ? await scrubGatewayEvents(store, erasedIds, texts) : 0;
  if (progress.events > 0) deps.enricher?.clear();
  const report = await audit(deps, progress, gatewayEventsScrubbed);
  await store.kvDelete(progressKey(request.id));
  await updatePending(store, (list) => list.filter((r) => r.id !== request.id));
  // The request itself held the selection (a filter's values): gone from the files too.
  await store.compact?.();
  return report;
}

/** Records the audit event (once per request, and never again for a selection with nothing new). */
async function audit(deps: EraseDeps, request: ErasureRequest, gatewayEventsScrubbed: number): Promise<EraseReport> {
  const report: EraseReport = {
    dryRun: false,
    events: request.events,
    already_erased: request.alreadyErased,
    deliveries_cancelled: request.cancelled,
  };
  if (request.events === 0 && request.cancelled === 0) {
    const earlier = await findAudit(deps.store, request.id);
    if (earlier) return { ...report, audit_event_id: earlier };
  }
  const selection: Record<string, unknown> = {};
  if (request.selection.subject !== undefined) selection.subject = request.selection.subject;
  if (request.selection.filter !== undefined || request.selection.filters !== undefined)
    selection.content_filter = true;
  selection.hash = request.id;
  const data: Record<string, unknown> = {
    by: request.by,
    at: new Date(request.at).toISOString(),
    selection,
    events: request.events,
    already_erased: request.alreadyErased,
    deliveries_cancelled: request.cancelled,
    gateway_events_scrubbed: gatewayEventsScrubbed,
  };
  if (request.resumed) data.resumed = true;
  // One audit event per request, also when a restart records it a second time.
  const recorded = await recordGatewayEvent(deps, "gateway.events.erased", data, `erasure:${request.id}:${request.at}`);
  return { ...report, audit_event_id: recorded.id };
}

/** The newest audit event of the selection `hash`, if the log still holds one. */
async function findAudit(store: StoreDriver, hash: string): Promise<string | undefined> {
  let after: number | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await store.list({ sourceId: GATEWAY_SOURCE_ID, type: "gateway.events.erased", after, limit: 200 });
    for (const record of page.events) {
      const selection = (record.event.data as { selection?: { hash?: unknown } } | null)?.selection;
      if (selection?.hash === hash) return record.id;
    }
    if (page.next === null) return undefined;
    after = page.next;
  }
  return undefined;
}

/** Rewrites the operational events whose `last_error` quotes an erased event; returns how many. */
async function scrubGatewayEvents(
  store: StoreDriver,
  erasedIds: ReadonlySet<string>,
  texts: ReadonlySet<string>,
): Promise<number> {
  let count = 0;
  for (const type of QUOTING_TYPES) {
    let after: number | undefined;
    for (let pages = 0; pages < 10_000; pages++) {
      const page = await store.list({ sourceId: GATEWAY_SOURCE_ID, type, after, limit: 200 });
      const changed: EventRecord[] = [];
      for (const record of page.events) {
        const data = record.event.data as Record<string, unknown> | null;
        const scrubbed = data && scrubOperationalData(data, erasedIds, texts);
        if (scrubbed) {
          changed.push({ ...record, event: { ...record.event, data: scrubbed }, rawBody: JSON.stringify(scrubbed) });
        }
      }
      if (changed.length > 0) count += await store.redactEvents(changed);
      if (page.next === null) break;
      after = page.next;
    }
  }
  return count;
}
