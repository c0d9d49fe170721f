/**
 * The `postgres` live hub driver: the shared live hub (src/stream/journal-hub.ts) over the
 * `postgres` store, woken by LISTEN/NOTIFY. Local appends are announced with `pg_notify` on one
 * channel per schema, one notification per group commit rather than per append (the appends a
 * commit answers are published in one turn of the event loop: the announcement waits for the
 * end of that turn and carries the highest seq, and while one is in flight the next waits for
 * it); every instance, on a notification, reads the event log after its cursor. A notification only shortens the wait: the data always comes from the event log (in
 * seq order, which is commit order: adapters/store/postgres/postgres-store.ts), and a poll
 * catches up after a lost one, so a lost notification delays and never drops. The listening
 * connection reconnects by itself and reads at once when it is back. Picked by default with
 * `store.driver: "postgres"`, whose connection options it shares (adapters/hub/registry.ts).
 */
import pg from "pg";
import type { EventRecord, StoreDriver } from "../../src/store/contract.ts";
import type { HubFactory } from "../../src/stream/hub-contract.ts";
import { openJournalHub, withJournalPublishTap } from "../../src/stream/journal-hub.ts";
import {
  clientConfig,
  keepErrorsLocal,
  type PostgresOptions,
  prepared,
  resolveSchema,
} from "../store/postgres/pg-connection.ts";

export interface PostgresHubOptions extends PostgresOptions {
  /** The `postgres` store on the same database and schema. */
  journal: Pick<StoreDriver, "readAfter" | "lastSeq">;
  /** Poll period behind LISTEN/NOTIFY, ms. Default 1000. */
  pollMs?: number;
  /** Told when an event log read fails. Default: ignored (the next poll retries). */
  onError?(error: unknown): void;
}

const NOTIFY = prepared("SELECT pg_notify($1, $2)");
/** Published records held for the read path at most (see `published`). */
const MAX_HELD = 4096;

/** The notification channel of a schema. */
export function wakeChannel(schema: string): string {
  return `gateway_events_${schema}`;
}

/** Connects the listener and the announcer, then starts reading at the event log's end. */
export const postgresHub: HubFactory<PostgresHubOptions> = async (options) => {
  const channel = wakeChannel(resolveSchema(options.schema));
  const config = clientConfig(options);
  // One connection announces; notifications are sent outside any transaction, at once.
  const announcer = new pg.Pool({ ...config, max: 1 });
  keepErrorsLocal(announcer);
  let listener: pg.Client | undefined;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let wake = () => {};

  const listen = async (): Promise<void> => {
    const client = new pg.Client(config);
    client.on("error", () => {});
    client.on("notification", (message) => {
      hear(message.payload);
      wake();
    });
    client.on("end", () => {
      if (listener !== client || closed) return;
      listener = undefined;
      scheduleReconnect();
    });
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listener = client;
    // Whatever was appended while no one listened is read now.
    wake();
  };
  const scheduleReconnect = (delay = 250) => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      listen().catch(() => scheduleReconnect(Math.min(delay * 2, 5_000)));
    }, delay);
    (retry as { unref?: () => void }).unref?.();
  };

  /**
   * The read path. Every wake-up reads the event log after the hub's cursor, and most of what it
   * finds there is what this instance has just appended and published: reading that back costs
   * PostgreSQL a fetch (and a decompression) of every record and the gateway a parse of it, for
   * records it already holds. So the records published here are kept until the cursor passes
   * them, and a read is answered from them when that answer is exactly what the event log
   * holds: the seqs right after the cursor, without a gap (a seq is published only after its
   * commit, and one that is here was not another instance's), and nothing beyond them that any
   * notification told of (`heard`: the highest seq announced on the channel, by any instance).
   * Otherwise, or when a notification's payload is not a seq, the event log is read. A commit
   * of another instance that lands after such an answer sends its own notification, which
   * wakes the hub again, and that read goes to the event log: nothing is delayed beyond the
   * notification, and a lost notification still leaves the poll.
   */
  const published = new Map<number, EventRecord>();
  let heard = 0;
  const hear = (payload: string | undefined) => {
    const seq = Number(payload);
    heard = Number.isSafeInteger(seq) ? Math.max(heard, seq) : Number.POSITIVE_INFINITY;
  };
  const journal: PostgresHubOptions["journal"] = {
    lastSeq: () => options.journal.lastSeq(),
    readAfter: async (afterSeq, limit, filter) => {
      for (const seq of published.keys()) if (seq <= afterSeq) published.delete(seq);
      if (filter === undefined) {
        const held: EventRecord[] = [];
        for (let seq = afterSeq + 1; held.length < limit; seq++) {
          const record = published.get(seq);
          if (!record) break;
          held.push(record);
        }
        const last = held[held.length - 1];
        if (last && last.seq >= heard) return held;
      }
      return options.journal.readAfter(afterSeq, limit, filter);
    },
  };

  /** Seqs published locally: the highest, and the highest announced. */
  let highest = 0;
  let announced = 0;
  let scheduled = false;
  let sending = false;
  const send = () => {
    scheduled = false;
    if (closed || highest <= announced) return;
    const seq = highest;
    sending = true;
    announcer
      .query({ ...NOTIFY, values: [channel, String(seq)] })
      .catch(() => {})
      .finally(() => {
        sending = false;
        announced = Math.max(announced, seq);
        if (highest > announced && !scheduled) {
          scheduled = true;
          setImmediate(send);
        }
      });
  };

  try {
    await listen();
  } catch (error) {
    await announcer.end().catch(() => {});
    throw error;
  }
  const hub = await openJournalHub({
    journal,
    pollIntervalMs: options.pollMs ?? 1000,
    onError: options.onError ?? (() => {}),
    announce: (seq) => {
      highest = Math.max(highest, seq);
      if (!scheduled && !sending) {
        scheduled = true;
        setImmediate(send);
      }
    },
    onClose: async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      const client = listener;
      listener = undefined;
      await Promise.all([client?.end().catch(() => {}), announcer.end().catch(() => {})]);
    },
  });
  wake = () => hub.wake();
  // Kept for the read path (before the publish wakes it) only while the hub is behind it;
  // bounded should the cursor stall.
  const hold = (record: EventRecord) => {
    if (published.size >= MAX_HELD) published.delete(published.keys().next().value as number);
    published.set(record.seq, record);
  };
  return withJournalPublishTap(hub, hold, "before");
};
