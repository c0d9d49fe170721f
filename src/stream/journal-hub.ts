/**
 * The shared live hub: the hub of shared stores (several instances on one Redis;
 * docs/several-instances.md): subscribers receive every recorded event of every instance,
 * read from the store's event log by seq, so they get them in `seq` order without gap or repeat.
 * A publish (a local append) and a wake-up from another instance (pub/sub) only say "read the
 * event log now"; a poll timer covers lost wake-ups, so a lost message delays an event but never
 * drops it. Drivers (adapters/hub/redis.ts, adapters/hub/upstash.ts) add the wake-ups and
 * their connections; this module holds the reading.
 */

import { createCoalescingWake } from "../ops/coalescing-wake.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import { type LiveHub, type PublishTapOrder, type RecordedListener, withPublishTap } from "./hub-contract.ts";

export interface JournalHubOptions {
  /** The store whose event log is read (every instance appends to the same one). */
  journal: Pick<StoreDriver, "readAfter" | "lastSeq">;
  /** Event log poll period behind the wake-ups, ms. */
  pollIntervalMs: number;
  /** Tells the other instances that `seq` was recorded (pub/sub); optional. */
  announce?: (seq: number) => void;
  /** Told when an event log read fails (the next wake-up or poll tries again). */
  onError(error: unknown): void;
  /** Releases the driver's connections on `close`. */
  onClose?: () => Promise<void>;
  /** Events read per event log read. Default 512. */
  batchSize?: number;
}

export interface JournalHub extends LiveHub {
  /** Reads the event log now (a wake-up from another instance). */
  wake(): void;
  /** Resolves once the event log has been read up to what it held when called (tests, shutdown). */
  caughtUp(): Promise<void>;
}

/**
 * Starts a hub at the event log's current end and begins polling; subscribers hear every event
 * recorded from then on.
 */
export async function openJournalHub(options: JournalHubOptions): Promise<JournalHub> {
  const listeners = new Set<RecordedListener>();
  const batchSize = options.batchSize ?? 512;
  let cursor = await options.journal.lastSeq();
  let closed = false;

  const drain = async () => {
    for (let round = 0; round < 10_000 && !closed; round++) {
      const records = await options.journal.readAfter(cursor, batchSize);
      for (const record of records) {
        if (closed) return;
        cursor = record.seq;
        for (const listener of listeners) listener(record);
      }
      if (records.length < batchSize) return;
    }
  };

  const loop = createCoalescingWake({ drain, stopped: () => closed, onError: options.onError });
  const wake = loop.wake;

  const poll = setInterval(wake, options.pollIntervalMs);
  (poll as { unref?: () => void }).unref?.();

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(record) {
      if (closed) return;
      options.announce?.(record.seq);
      wake();
    },
    wake,
    async caughtUp() {
      const target = await options.journal.lastSeq();
      for (let round = 0; round < 100 && !closed && cursor < target; round++) {
        wake();
        await loop.idle();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(poll);
      listeners.clear();
      await loop.idle();
      await options.onClose?.();
    },
  };
}

/** `withPublishTap` for a shared live hub: `wake` and `caughtUp` are delegated too. */
export function withJournalPublishTap(
  hub: JournalHub,
  tap: (record: EventRecord) => void,
  order: PublishTapOrder = "after",
): JournalHub {
  const tapped = withPublishTap(hub, tap, order);
  return {
    subscribe: tapped.subscribe,
    publish: tapped.publish,
    close: tapped.close,
    wake: () => hub.wake(),
    caughtUp: () => hub.caughtUp(),
  };
}
