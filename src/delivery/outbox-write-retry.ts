/**
 * Outbox writes that keep being tried until the outbox takes them
 * (docs/fan-out-and-destinations.md). A record
 * whose write failed (disk full) is kept as the latest unsaved version of its delivery and
 * written again with a growing pause (0.5 s doubling to 30 s); a newer version of the same
 * delivery replaces it. Meanwhile the admin views show the unsaved version, which is the state
 * the delivery is really in: a delivery that was delivered is shown `delivered`, not left at
 * its last durable `delivering` until a restart sends it again. `/healthz` reports the outbox
 * as unable to record while a write is outstanding (src/ops/write-health.ts).
 *
 * Writes made in one turn of the event loop go to the outbox as ONE `saveDeliveries` call, once
 * the turn is over (`afterTurn`): a lane persists each attempt's "delivering" and outcome one
 * record at a time, and a call per record costs a round trip on Redis and PostgreSQL (a script
 * call; a queued transaction item) and a queued write on SQLite. Only the last version of a
 * delivery made in the turn is written (the earlier ones would be overwritten in the same
 * write); deliveries keep the order of their last versions, and every caller's promise
 * resolves after the write that holds its records.
 */
import type { Logger } from "../ops/logger.ts";
import type { WriteHealth } from "../ops/write-health.ts";
import { type DeliveryRecord, type DeliveryState, deliveryKey, type OutboxStore } from "./outbox-contract.ts";
import type { Scheduler } from "./scheduler.ts";

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

export interface RetryingPersist {
  /** Writes the records; resolves after the first try (failures are retried in the background). */
  persist(records: DeliveryRecord[]): Promise<void>;
  /** The record as it really is: its unsaved version when one is waiting, else `record`. */
  overlay(record: DeliveryRecord): DeliveryRecord;
  /** Per-destination state counts corrected for unsaved versions. */
  countByState(): Promise<Record<string, Partial<Record<DeliveryState, number>>>>;
  /** One last try of what is unsaved, then no more retries (shutdown). */
  stop(): Promise<void>;
}

export interface RetryingPersistDeps {
  outbox: OutboxStore;
  scheduler: Scheduler;
  logger: Logger;
  writeHealth?: WriteHealth;
  now: () => number;
  /**
   * Runs `run` once the current turn of the event loop is over, so that the writes of every
   * callback of the turn join one call (Node: `setImmediate`, after the poll phase). Default
   * `queueMicrotask`: the writes of one callback and its promise continuations.
   */
  afterTurn?: (run: () => void) => void;
}

/** The writes gathered during one turn and the promise their callers wait on. */
interface Gathering {
  records: DeliveryRecord[];
  sent: boolean;
  done: Promise<void>;
  finish(): void;
}

/** The last version of each delivery in `records`, in the order of those last versions. */
export function lastVersions(records: readonly DeliveryRecord[]): DeliveryRecord[] {
  const last = new Map<string, number>();
  records.forEach((record, i) => {
    last.set(deliveryKey(record.eventId, record.destinationId), i);
  });
  if (last.size === records.length) return [...records];
  return [...last.values()].sort((a, b) => a - b).map((i) => records[i] as DeliveryRecord);
}

/** Wraps the outbox's `saveDeliveries` with retries and the unsaved overlay. */
export function createRetryingPersist(deps: RetryingPersistDeps): RetryingPersist {
  const { outbox, logger } = deps;
  const unsaved = new Map<string, DeliveryRecord>();
  let cancelRetry: (() => void) | undefined;
  let delayMs = FIRST_RETRY_MS;
  let stopped = false;
  const afterTurn = deps.afterTurn ?? queueMicrotask;
  /** The writes of the current turn, sent once it is over. */
  let gathering: Gathering | undefined;

  /** Writes `records`; on success forgets those not replaced meanwhile. */
  const write = async (records: DeliveryRecord[]): Promise<boolean> => {
    try {
      await outbox.saveDeliveries(records);
    } catch (error) {
      deps.writeHealth?.failed("outbox", deps.now());
      logger.error("outbox write failed; retrying", { error: String(error), count: records.length });
      scheduleRetry();
      return false;
    }
    for (const record of records) {
      const key = deliveryKey(record.eventId, record.destinationId);
      if (unsaved.get(key) === record) unsaved.delete(key);
    }
    if (unsaved.size === 0) {
      deps.writeHealth?.succeeded("outbox");
      delayMs = FIRST_RETRY_MS;
    }
    return true;
  };

  const scheduleRetry = () => {
    if (stopped || cancelRetry) return;
    const wait = delayMs;
    delayMs = Math.min(delayMs * 2, MAX_RETRY_MS);
    cancelRetry = deps.scheduler.setTimer(wait, () => {
      cancelRetry = undefined;
      if (unsaved.size > 0) void write([...unsaved.values()]);
    });
  };

  /** Sends a gathered turn's writes, once; its callers are answered when the write is done. */
  const send = async (turn: Gathering): Promise<void> => {
    if (turn.sent) return turn.done;
    turn.sent = true;
    if (gathering === turn) gathering = undefined;
    await write(lastVersions(turn.records));
    turn.finish();
  };

  /** The current turn's writes, started (and sent after the turn) by the first write of the turn. */
  const gather = (): Gathering => {
    if (gathering) return gathering;
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const turn: Gathering = { records: [], sent: false, done, finish };
    gathering = turn;
    afterTurn(() => void send(turn));
    return turn;
  };

  return {
    persist(records) {
      if (records.length === 0) return Promise.resolve();
      for (const record of records) unsaved.set(deliveryKey(record.eventId, record.destinationId), record);
      const turn = gather();
      for (const record of records) turn.records.push(record);
      return turn.done;
    },
    overlay: (record) => unsaved.get(deliveryKey(record.eventId, record.destinationId)) ?? record,
    async countByState() {
      const counts = await outbox.countByState();
      for (const record of unsaved.values()) {
        const durable = await outbox.getDelivery(record.eventId, record.destinationId);
        const perState = counts[record.destinationId] ?? {};
        counts[record.destinationId] = perState;
        if (durable) {
          // A state none is in any more is left out, as the outbox itself reports it.
          const left = (perState[durable.state] ?? 1) - 1;
          if (left > 0) perState[durable.state] = left;
          else delete perState[durable.state];
        }
        perState[record.state] = (perState[record.state] ?? 0) + 1;
      }
      return counts;
    },
    async stop() {
      if (gathering) await send(gathering);
      stopped = true;
      cancelRetry?.();
      cancelRetry = undefined;
      if (unsaved.size > 0) await write([...unsaved.values()]);
    },
  };
}
