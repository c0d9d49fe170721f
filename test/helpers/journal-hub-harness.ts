/**
 * A hub conformance harness (test/conformance/hub-conformance.ts) for shared live hubs
 * (src/stream/journal-hub.ts): such a hub hands its subscribers what the store's event log holds,
 * so what the suite publishes is first appended to a real store, as the ingress does, and then
 * announced. `flush` waits until every open hub has read the event log up to its end.
 */
import type { StoreDriver } from "../../src/store/contract.ts";
import type { LiveHub } from "../../src/stream/hub-contract.ts";
import type { JournalHub } from "../../src/stream/journal-hub.ts";
import type { HubHarness } from "../conformance/hub-conformance.ts";
import { makeTestRecord } from "../conformance/sink-conformance.ts";

export interface JournalHubHarnessOptions {
  /** A fresh, empty store (its own key prefix). */
  openStore(): StoreDriver | Promise<StoreDriver>;
  /** The hub driver under test over `journal`. */
  openHub(journal: StoreDriver): LiveHub | Promise<LiveHub>;
}

/** The harness: every hub it opens appends what it is given, in order, before publishing it. */
export function journalHubHarness(options: JournalHubHarnessOptions): HubHarness {
  const pending = new Set<{ appended: () => Promise<unknown>; hub: JournalHub }>();
  return {
    async open() {
      const store = await options.openStore();
      const hub = (await options.openHub(store)) as JournalHub;
      let chain: Promise<unknown> = Promise.resolve();
      let closed = false;
      const entry = { appended: () => chain, hub };
      pending.add(entry);
      return {
        subscribe: (listener) => hub.subscribe(listener),
        publish(record) {
          // After close the store is gone; the hub itself must then ignore the publish.
          if (closed) return hub.publish(record);
          chain = chain.then(async () => {
            const { seq } = await store.append(record, `test\u0000${record.id}`, 60_000);
            hub.publish({ ...record, seq });
          });
          // A failed append fails the next flush (which awaits the chain), not the process.
          chain.catch(() => {});
        },
        async close() {
          if (closed) return;
          closed = true;
          await chain;
          await hub.close();
          pending.delete(entry);
          await store.close();
        },
      };
    },
    async flush() {
      for (const { appended, hub } of pending) {
        await appended();
        await hub.caughtUp();
      }
    },
  };
}

/**
 * Appends `count` test records to `store` one after the other, as an instance's ingress does,
 * and announces each on `hub` (none: appends nobody announced, a lost wake-up); resolves with
 * their seqs.
 */
export async function appendRecords(store: StoreDriver, count: number, hub?: LiveHub): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i++) {
    const record = makeTestRecord();
    const { seq } = await store.append(record, `k\u0000${record.id}`, 60_000);
    hub?.publish({ ...record, seq });
    seqs.push(seq);
  }
  return seqs;
}
