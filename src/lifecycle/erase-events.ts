/**
 * Erasure on request (a data subject's right to erasure): every event a selection matches is
 * replaced in the store by a tombstone that keeps only what dedupe and the log's order need (id,
 * seq, source, upstream identity, type, subject, times); its body, raw bytes, headers and
 * envelope data go. Deliveries still pending are cancelled, cached enrichments dropped, and an
 * audit record (`gateway.events.erased`: who, when, what, how many) is recorded as a gateway
 * event. A dry run only counts (docs/data-lifecycle.md).
 */
import type { DeliveryEngine } from "../delivery/delivery-engine.ts";
import type { Enricher } from "../enrich/create-enricher.ts";
import type { EventQuery, EventRecord, StoreDriver } from "../store/contract.ts";
import { ERASED_MARK, isErased } from "../store/erased-event.ts";
import { listMatching } from "../store/list-matching.ts";
import { createSlicer } from "../store/yield-slices.ts";
import { type GatewayEventDeps, recordGatewayEvent } from "./gateway-events.ts";

const PAGE = 200;

export interface EraseSelection {
  /**
   * The store query of the events to erase: `subject` and/or a content `filter` (src/filters),
   * applied in the store's SQL where it can be, else in memory (store/list-matching.ts).
   */
  query: Omit<EventQuery, "after" | "limit">;
  /** What the audit record says was asked for (the subject and/or the filter as given). */
  described: Record<string, unknown>;
}

export interface EraseDeps extends GatewayEventDeps {
  store: StoreDriver;
  delivery?: Pick<DeliveryEngine, "cancelEvent">;
  enricher?: Pick<Enricher, "clear">;
}

export interface EraseReport {
  dryRun: boolean;
  /** Events erased now (or that a run would erase). */
  events: number;
  /** Matching events that were erased before. */
  already_erased: number;
  /** Pending deliveries cancelled. */
  deliveries_cancelled: number;
  /** Id of the audit record (`gateway.events.erased`), absent in a dry run. */
  audit_event_id?: string;
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

/** Erases (or counts, with `dryRun`) the events `selection` matches; `actor` names who asked. */
export async function eraseEvents(
  deps: EraseDeps,
  selection: EraseSelection,
  options: { dryRun: boolean; actor: string },
): Promise<EraseReport> {
  const now = deps.clock.now();
  let events = 0;
  let alreadyErased = 0;
  let cancelled = 0;
  let after: number | undefined;
  const pause = createSlicer();
  for (let pages = 0; pages < 1_000_000; pages++) {
    const page = await listMatching(
      deps.store,
      { ...selection.query, after, limit: PAGE },
      Number.POSITIVE_INFINITY,
      pause,
    );
    await pause();
    const chosen: EventRecord[] = [];
    for (const record of page.events) {
      if (isErased(record)) alreadyErased++;
      else chosen.push(record);
    }
    events += chosen.length;
    if (!options.dryRun && chosen.length > 0) {
      await deps.store.redactEvents(chosen.map((r) => toTombstone(r, now)));
      for (const record of chosen)
        cancelled += (await deps.delivery?.cancelEvent(record.id, "the event was erased")) ?? 0;
    }
    if (page.next === null) break;
    after = page.next;
  }
  if (options.dryRun) return { dryRun: true, events, already_erased: alreadyErased, deliveries_cancelled: 0 };
  if (events > 0) {
    await deps.store.compact?.();
    deps.enricher?.clear();
  }
  const audit = await recordGatewayEvent(deps, "gateway.events.erased", {
    by: options.actor,
    at: new Date(now).toISOString(),
    selection: selection.described,
    events,
    already_erased: alreadyErased,
    deliveries_cancelled: cancelled,
  });
  return {
    dryRun: false,
    events,
    already_erased: alreadyErased,
    deliveries_cancelled: cancelled,
    audit_event_id: audit.id,
  };
}
