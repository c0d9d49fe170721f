/**
 * The event hub for a shared store (several instances on one Redis): listeners receive every
 * recorded event of every instance, read from the journal by seq, so they get them in `seq`
 * order without gap or repeat. A publish (a local append) and a wake-up from another instance
 * (pub/sub) only say "read the journal now"; a poll timer covers lost wake-ups, so a lost
 * message delays an event but never drops it (README "Running several instances").
 */
import type { StoreDriver } from "../store/contract.ts";
import type { EventHub, RecordedListener } from "./event-hub.ts";

export interface JournalHubOptions {
  store: Pick<StoreDriver, "readAfter" | "lastSeq">;
  /** Journal poll period behind the wake-ups, ms. */
  pollIntervalMs: number;
  /** Tells the other instances that `seq` was recorded (pub/sub); optional. */
  announce?: (seq: number) => void;
  onError(error: unknown): void;
  /** Events read per journal read. Default 512. */
  batchSize?: number;
}

export interface JournalHub extends EventHub {
  /** Reads the journal now (a wake-up from another instance). */
  wake(): void;
  /** Starts at the journal's current end and begins polling. */
  start(): Promise<void>;
  stop(): void;
}

/** Creates the hub; listeners get nothing before `start`. */
export function createJournalHub(options: JournalHubOptions): JournalHub {
  const listeners = new Set<RecordedListener>();
  const batchSize = options.batchSize ?? 512;
  let cursor = 0;
  let running = false;
  let again = false;
  let stopped = true;
  let poll: ReturnType<typeof setInterval> | undefined;

  const deliver = (record: Parameters<RecordedListener>[0]) => {
    for (const listener of listeners) {
      try {
        listener(record);
      } catch (error) {
        options.onError(error);
      }
    }
  };

  const drain = async () => {
    for (let round = 0; round < 10_000 && !stopped; round++) {
      const records = await options.store.readAfter(cursor, batchSize);
      for (const record of records) {
        cursor = record.seq;
        deliver(record);
      }
      if (records.length < batchSize) return;
    }
  };

  const wake = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    void (async () => {
      do {
        again = false;
        try {
          await drain();
        } catch (error) {
          options.onError(error);
          break;
        }
      } while (again && !stopped);
      running = false;
    })();
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(record) {
      options.announce?.(record.seq);
      wake();
    },
    wake,
    async start() {
      cursor = await options.store.lastSeq();
      stopped = false;
      poll = setInterval(wake, options.pollIntervalMs);
      (poll as { unref?: () => void }).unref?.();
    },
    stop() {
      stopped = true;
      clearInterval(poll);
    },
  };
}
