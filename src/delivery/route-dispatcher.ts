/**
 * Routes the event log into the outbox: reads the events after the durable routing cursor, decides
 * their destinations by the configured routes, and creates one delivery record per (event,
 * destination) together with the new cursor in one outbox write. Woken by the event hub after
 * each durable append and by a poll timer, so nothing depends on in-memory notification alone;
 * after a crash it resumes from the durable cursor and re-creates records idempotently. A shared
 * outbox whose acknowledged routing writes a crash can take (PostgreSQL commits them
 * asynchronously) is told the cursor this instance knows stored with each write; when the
 * stored one is behind it (the write is refused, or a cursor read finds it), the dispatcher
 * rewinds to it and routes those events again (`rewind`).
 *
 * A batch that creates no record (no route names a delivered destination: the common case of a
 * gateway that only records and streams) moves the cursor in memory and writes it at most once
 * per `CURSOR_FLUSH_MS` (and at stop), instead of one durable outbox write per batch: after a
 * crash those events are read again and still create nothing, so nothing changes but the cost.
 * A shared outbox (several instances) still writes the cursor with every batch. When no route
 * names a delivered destination at all, the events are not even read: the cursor moves to the
 * store's last seq.
 *
 * On a single-process outbox, routed records go to their lanes at once, before their outbox
 * write is durable: a delivery never waits for the router's write (and the router never waits
 * for it before routing the next events). The writes stay one at a time and in order, and a
 * write that failed is carried by the next one, so the durable cursor never passes a record that
 * is not durable: after a crash, events whose write was lost are routed again (at least once, as
 * an attempt whose "delivering" write was lost). A save by a lane that lands before its record's
 * create is kept (the create only inserts a missing record). Events recorded before this process
 * started may have records already (saved by a lane before a crash took their routing write, or
 * by a replay), so they are routed as before: written first, and only the records the write
 * created go to the lanes.
 */
import { createCoalescingWake } from "../ops/coalescing-wake.ts";
import type { Logger } from "../ops/logger.ts";
import { type CompiledRoute, resolveDestinations } from "../routes/match-routes.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { Tracing } from "../tracing/tracing-port.ts";
import { traceRouting } from "./delivery-spans.ts";
import {
  type CreationLease,
  type DeliveryRecord,
  type DeliveryState,
  type DestinationState,
  type OutboxStore,
  RoutingCursorBehindError,
} from "./outbox-contract.ts";
import type { Scheduler } from "./scheduler.ts";
import { markStage } from "./stage-trace.ts";

export interface DispatcherDeps {
  store: StoreDriver;
  outbox: OutboxStore;
  routes: readonly CompiledRoute[];
  clock: { now(): number };
  scheduler: Scheduler;
  logger: Logger;
  /** The state a new record of the destination starts in, or undefined when it has no lane. */
  initialState(destinationId: string): DeliveryState | undefined;
  /**
   * Hands freshly created records to their lanes (`lease`: the one they were created under;
   * `states`: the destinations' saved states read in the same outbox step, when it read them).
   */
  onCreated(records: DeliveryRecord[], lease?: CreationLease, states?: DestinationState[]): void;
  /**
   * A shared outbox's routing lease: the records this instance creates start leased to it
   * (lease-poller.ts), so they go to its lanes without a claim.
   */
  creationLease?(): CreationLease | undefined;
  track(work: Promise<unknown>): void;
  /** Events read per outbox write. */
  batchSize: number;
  /** Poll period in ms (safety net behind the hub). */
  pollIntervalMs: number;
  /** Records a routing span per traced event, when tracing is on. */
  tracing?: Tracing;
}

/** Builds the records of one event for the destinations its routes name. */
export function buildDeliveries(
  record: EventRecord,
  routes: readonly CompiledRoute[],
  now: number,
  initialState: (destinationId: string) => DeliveryState | undefined,
): DeliveryRecord[] {
  const out: DeliveryRecord[] = [];
  for (const destinationId of resolveDestinations(routes, record.sourceId, record.event, record.headers)) {
    const state = initialState(destinationId);
    if (!state) continue;
    out.push({
      eventId: record.id,
      destinationId,
      seq: record.seq,
      subject: record.event.subject,
      receivedAt: record.receivedAt,
      createdAt: now,
      updatedAt: now,
      state,
      nextAttemptAt: now,
      failures: 0,
      attempts: [],
    });
  }
  return out;
}

/** Offered events kept at most while the routing catches up (more are read from the log). */
const MAX_OFFERED = 4_096;

/** How long a cursor moved by record-less batches may stay unwritten, ms. */
const CURSOR_FLUSH_MS = 1000;

/** Creates the dispatcher; `start` begins at the outbox's durable cursor. */
export function createRouteDispatcher(deps: DispatcherDeps) {
  let cursor = 0;
  /** The cursor moved by record-less batches and not yet written, if any. */
  let unwritten: number | undefined;
  let cancelCursorFlush: (() => void) | undefined;
  let stopped = true;
  let cancelPoll: (() => void) | undefined;
  let failures = 0;
  /** Whether any route names a destination with a lane (set at start). */
  let deliverable = true;
  /**
   * Events up to this seq were recorded before `start`: their records may exist already, so they
   * are written before they go to the lanes (only those the write created).
   */
  let recordedBeforeStart = 0;
  /** Records already with their lanes whose create is not written yet, and the cursor to write with them. */
  let unsaved: DeliveryRecord[] = [];
  let unsavedCursor = 0;
  /** The one routing write in flight (they run one at a time, in order). */
  let writing = false;
  /**
   * Recorded events handed over by the hub (`offer`), by seq, not routed yet: a run of them from
   * `cursor + 1` on is exactly the event log's next events (seqs are unique), so they are routed
   * without reading the log again. Anything else (a gap, an overflow) is read from the log.
   */
  const offered = new Map<number, { event: EventRecord; local: boolean }>();
  /** Wake-ups that asked for a log read, and how many of them a read to the log's end covered. */
  let readWanted = 0;
  let readDone = 0;
  /**
   * Whether the last routing write found records that existed already (on a shared outbox:
   * another instance routed those events first): the shared cursor is read before routing
   * offered events again.
   */
  let overtaken = true;
  /** After a failed routing write, the next one waits for the poll (which backs off). */
  let writeBlocked = false;
  let writeFailures = 0;

  const schedulePoll = () => {
    cancelPoll?.();
    // After store or outbox errors, back off up to a minute (or the period, when longer); the
    // hub still wakes us meanwhile.
    const backoff = 2 ** Math.max(failures, writeFailures);
    const delay = Math.min(deps.pollIntervalMs * backoff, Math.max(deps.pollIntervalMs, 60_000));
    cancelPoll = deps.scheduler.setTimer(delay, () => {
      cancelPoll = undefined;
      writeBlocked = false;
      writeUnsaved();
      wake();
      if (!stopped) schedulePoll();
    });
  };

  const flushCursor = () => {
    cancelCursorFlush?.();
    cancelCursorFlush = undefined;
    if (unwritten === undefined) return;
    const target = unwritten;
    unwritten = undefined;
    // Records not yet written: the cursor goes with them, never past them.
    if (writing || unsaved.length > 0) {
      unsavedCursor = Math.max(unsavedCursor, target);
      return;
    }
    deps.track(
      deps.outbox.createDeliveries([], target).catch((error) => {
        // Not lost: the events are routed again (to no destination) after a restart.
        deps.logger.warn("writing the routing cursor failed", { error: String(error) });
      }),
    );
  };

  /**
   * Writes the records handed to lanes ahead of their write, with their cursor: one write at a
   * time; a failed one is carried by the next (after the poll, which backs off).
   */
  const writeUnsaved = () => {
    if (writing || writeBlocked || (unsaved.length === 0 && unsavedCursor === 0)) return;
    const records = unsaved;
    const target = unsavedCursor;
    unsaved = [];
    unsavedCursor = 0;
    writing = true;
    deps.track(
      deps.outbox.createDeliveries(records, target).then(
        () => {
          writing = false;
          writeFailures = 0;
          writeUnsaved();
        },
        (error) => {
          writing = false;
          unsaved = records.concat(unsaved);
          unsavedCursor = Math.max(unsavedCursor, target);
          if (stopped) {
            // Their events are routed again after a restart (the cursor did not pass them).
            deps.logger.warn("writing routed deliveries failed at stop", { error: String(error) });
            return;
          }
          writeBlocked = true;
          writeFailures = Math.min(writeFailures + 1, 6);
          deps.logger.error("writing routed deliveries to the outbox failed; will retry", {
            error: String(error),
            count: records.length,
          });
          schedulePoll();
        },
      ),
    );
  };

  const routeEvent = (event: EventRecord, now: number) => {
    const built = buildDeliveries(event, deps.routes, now, deps.initialState);
    if (deps.tracing && event.event.traceparent) {
      traceRouting(
        deps.tracing,
        event,
        built.map((record) => record.destinationId),
      );
    }
    return built;
  };

  /** Whether an event the hub offered (not only a local append) waits to be routed. */
  const hubOfferWaiting = () => {
    for (const entry of offered.values()) if (!entry.local) return true;
    return false;
  };

  /** The offered events from `cursor + 1` on, in seq order (at most a batch), if any. */
  const takeOffered = (): EventRecord[] | undefined => {
    for (const seq of offered.keys()) if (seq <= cursor) offered.delete(seq);
    const out: EventRecord[] = [];
    for (let seq = cursor + 1; out.length < deps.batchSize; seq++) {
      const entry = offered.get(seq);
      if (!entry) break;
      out.push(entry.event);
    }
    return out.length > 0 ? out : undefined;
  };

  const drain = async () => {
    for (;;) {
      let handed = takeOffered();
      // Nothing offered and no read asked for (see below): no need to read the shared cursor.
      if (deps.outbox.shared && !handed && !hubOfferWaiting() && readDone >= readWanted) return;
      // Several instances share a cursor: skip what another instance already routed. Before
      // routing offered copies, only while routing finds records another instance created
      // first: alone, that read is a round trip in series for nothing (a record routed twice is
      // created once anyway).
      if (deps.outbox.shared && (!handed || overtaken)) {
        const stored = await deps.outbox.readCursor();
        if (stored < cursor) {
          rewind(stored);
          continue;
        }
        cursor = stored;
        handed = takeOffered();
      }
      if (!deliverable && !deps.outbox.shared) {
        const last = await deps.store.lastSeq();
        if (last <= cursor || stopped) return;
        cursor = last;
        unwritten = last;
        cancelCursorFlush ??= deps.scheduler.setTimer(CURSOR_FLUSH_MS, flushCursor);
        continue;
      }
      // Woken by offers only, the log is read only when an event the hub offered waits behind a
      // gap (events not offered, or offered out of order): otherwise what was never offered is
      // read at the next wake-up that asks for it, or at the poll. A local append behind a gap
      // (other instances' events before it) waits for the hub to hand those over.
      if (!handed && !hubOfferWaiting() && readDone >= readWanted) return;
      const asked = readWanted;
      const events = handed ?? (await deps.store.readAfter(cursor, deps.batchSize));
      if (!handed && events.length < deps.batchSize) readDone = Math.max(readDone, asked);
      if (events.length === 0 || stopped) return;
      const now = deps.clock.now();
      const records = events.flatMap((event) => routeEvent(event, now));
      const last = (events[events.length - 1] as EventRecord).seq;
      if (records.length === 0 && !deps.outbox.shared) {
        cursor = last;
        unwritten = last;
        cancelCursorFlush ??= deps.scheduler.setTimer(CURSOR_FLUSH_MS, flushCursor);
        continue;
      }
      if (!deps.outbox.shared && (events[0] as EventRecord).seq > recordedBeforeStart) {
        // New events: to the lanes now; the write follows (see the header).
        cursor = last;
        unsaved = unsaved.length === 0 ? records : unsaved.concat(records);
        unsavedCursor = Math.max(unsavedCursor, last, unwritten ?? 0);
        if (unwritten !== undefined) {
          unwritten = undefined;
          cancelCursorFlush?.();
          cancelCursorFlush = undefined;
        }
        writeUnsaved();
        deps.onCreated(records);
        continue;
      }
      const lease = deps.outbox.shared ? deps.creationLease?.() : undefined;
      for (const record of records) markStage("routing", record.receivedAt);
      // Leased records go to this instance's lanes in the destinations' states read with them
      // (when the outbox can: one round trip less before the first attempt).
      // A shared outbox is told the cursor this instance knows stored: a write made after the
      // store lost routing writes (rewound below) is refused instead of passing their events.
      const expected = deps.outbox.shared ? cursor : undefined;
      let written: { created: DeliveryRecord[]; states?: DestinationState[] };
      try {
        written =
          lease && deps.outbox.createDeliveriesWithStates
            ? await deps.outbox.createDeliveriesWithStates(records, last, lease, expected)
            : { created: await deps.outbox.createDeliveries(records, last, lease, expected) };
      } catch (error) {
        if (!(error instanceof RoutingCursorBehindError)) throw error;
        rewind(error.stored);
        continue;
      }
      const { created, states } = written;
      for (const record of created) markStage("created", record.receivedAt);
      cursor = last;
      // This write carried the cursor too (it only moves forward).
      if (unwritten !== undefined) {
        unwritten = undefined;
        cancelCursorFlush?.();
        cancelCursorFlush = undefined;
      }
      overtaken = created.length < records.length;
      if (created.length > 0) deps.onCreated(created, lease, states);
    }
  };

  /**
   * The stored cursor is behind the one this instance read or wrote: the store lost routing
   * writes it had acknowledged (PostgreSQL's asynchronous routing commits, taken by a crash of
   * the server), and with them their records. Routes again from the stored cursor, reading the
   * event log: the lost records are created again (same ids; records that survived, or that a
   * lane's outcome write put back, are left as they are) and handed to the lanes, which may
   * deliver some a second time (at least once, same webhook-id).
   */
  const rewind = (stored: number) => {
    deps.logger.warn("the stored routing cursor is behind this instance's: routing again from it", {
      stored,
      cursor,
    });
    cursor = stored;
    overtaken = true;
    readWanted++;
  };

  const { wake: run } = createCoalescingWake({
    drain,
    stopped: () => stopped,
    onDrained: () => {
      failures = 0;
    },
    onError: (error) => {
      failures = Math.min(failures + 1, 6);
      deps.logger.error("routing events to the outbox failed; will retry", { error: String(error) });
    },
    track: deps.track,
  });

  /** Routes soon, reading the event log after the cursor. */
  const wake = () => {
    readWanted++;
    run();
  };

  return {
    /** Loads the durable cursor and begins routing. */
    async start() {
      cursor = await deps.outbox.readCursor();
      recordedBeforeStart = await deps.store.lastSeq();
      deliverable = deps.routes.some((route) => route.destinations.some((id) => deps.initialState(id) !== undefined));
      stopped = false;
      schedulePoll();
      wake();
    },
    /** Something was appended: route it soon. */
    wake,
    /**
     * A recorded event, as the hub hands it over (the local appends and, on a shared store, the
     * other instances'): routed soon, from this copy when it is the next after the cursor.
     */
    offer(event: EventRecord) {
      if (stopped) return;
      markStage("offered", event.receivedAt);
      if (!deliverable && !deps.outbox.shared) return wake();
      // Routed already (read from the log before the hub handed it over): nothing to do.
      if (event.seq <= cursor) return;
      // Too many waiting (the routing is behind): the log is read instead.
      if (offered.size >= MAX_OFFERED) return wake();
      offered.set(event.seq, { event, local: false });
      run();
    },
    /**
     * An event this instance just recorded (a shared outbox: the hub hands it over too, after
     * its read of the log): routed at once when it is the next after the cursor, without
     * waiting for that read; behind a gap (events of other instances not handed over yet) it
     * waits for the hub, which hands those over. Never a reason to read the log by itself.
     */
    offerLocal(event: EventRecord) {
      if (stopped || !deliverable || event.seq <= cursor) return;
      if (offered.has(event.seq) || offered.size >= MAX_OFFERED) return;
      offered.set(event.seq, { event, local: true });
      run();
    },
    /** The routes or the lanes changed (reload): recomputes what is delivered and routes on. */
    refresh() {
      deliverable = deps.routes.some((route) => route.destinations.some((id) => deps.initialState(id) !== undefined));
      wake();
    },
    stop() {
      stopped = true;
      offered.clear();
      cancelPoll?.();
      cancelPoll = undefined;
      flushCursor();
      // One last try of what the lanes hold unwritten (failures are routed again after a restart).
      writeBlocked = false;
      writeUnsaved();
    },
    get cursor() {
      return cursor;
    },
  };
}
