/**
 * The `upstash` live hub driver: the shared live hub (src/stream/journal-hub.ts) over the `upstash`
 * store, polled every `pollMs` (the REST API has no pub/sub subscriber), plus an immediate read
 * after each local append. Picked by default with `store.driver: "upstash"`
 * (docs/several-instances.md).
 */
import type { StoreDriver } from "../../src/store/contract.ts";
import type { HubFactory } from "../../src/stream/hub-contract.ts";
import { openJournalHub } from "../../src/stream/journal-hub.ts";

export interface UpstashHubOptions {
  /** The `upstash` store on the same database and prefix. */
  journal: Pick<StoreDriver, "readAfter" | "lastSeq">;
  /** Event log poll period, ms. Default 100. */
  pollMs?: number;
  /** Told when an event log read fails. Default: ignored (the next poll retries). */
  onError?(error: unknown): void;
}

export const upstashHub: HubFactory<UpstashHubOptions> = (options) =>
  openJournalHub({
    journal: options.journal,
    pollIntervalMs: options.pollMs ?? 100,
    onError: options.onError ?? (() => {}),
  });
