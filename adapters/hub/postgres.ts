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
import type { StoreDriver } from "../../src/store/contract.ts";
import type { HubFactory } from "../../src/stream/hub-contract.ts";
import { openJournalHub } from "../../src/stream/journal-hub.ts";
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
    client.on("notification", () => wake());
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
    journal: options.journal,
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
  return hub;
};
