/**
 * The `upstash` driver (`@upstash/redis` over REST): the store and the shared outbox of the
 * `redis` driver on the same Lua scripts, and a live hub that polls the journal (the REST API
 * has no pub/sub subscriber). URL and token come from the environment
 * (`UPSTASH_REDIS_REST_URL`, `UPSTASH_REDIS_REST_TOKEN`).
 */
import type { OutboxFactory } from "../../../src/delivery/outbox-contract.ts";
import { createJournalHub, type JournalHub } from "../../../src/events/journal-hub.ts";
import type { StoreDriver, StoreFactory } from "../../../src/store/contract.ts";
import { createScriptedOutbox } from "../redis/scripted-outbox.ts";
import { createScriptedStore } from "../redis/scripted-store.ts";
import { createUpstashRunner, type UpstashRunnerOptions } from "./upstash-runner.ts";

export interface UpstashDriverOptions extends UpstashRunnerOptions {
  /** Hash-tag prefix of every key. Default `gw`. */
  prefix?: string;
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** The store driver on Upstash. */
export const upstashStore: StoreFactory<UpstashDriverOptions> = (options) =>
  createScriptedStore(createUpstashRunner(options), options);

/** The shared outbox on Upstash. */
export const upstashOutbox: OutboxFactory<UpstashDriverOptions> = (options) =>
  createScriptedOutbox(createUpstashRunner(options), options);

/** The live hub on Upstash: the journal, polled every `pollMs` (no wake-ups over REST). */
export function upstashHub(options: {
  store: Pick<StoreDriver, "readAfter" | "lastSeq">;
  pollMs: number;
  onError(error: unknown): void;
}): JournalHub & { close(): Promise<void> } {
  const hub = createJournalHub({ store: options.store, pollIntervalMs: options.pollMs, onError: options.onError });
  return { ...hub, close: async () => hub.stop() };
}
