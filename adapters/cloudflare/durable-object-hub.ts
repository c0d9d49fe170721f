/**
 * The live hub of a Worker isolate (src/stream/hub-contract.ts): subscribers in this isolate
 * hear each record at once, and each record is also forwarded to the Durable Objects that serve
 * the whole deployment (the delivery object's `wake`, the live hub object's `publish`), kept
 * alive past the response with `waitUntil`. A forward that fails is reported, never thrown: the
 * delivery object's event log poll (alarm) and a subscriber's resume by cursor catch up from the
 * store, so the hub may drop a notification without losing an event.
 */

import type { EventRecord } from "../../src/store/contract.ts";
import type { LiveHub, RecordedListener } from "../../src/stream/hub-contract.ts";

export interface DurableObjectHubOptions {
  /** Sends a record to one object (an RPC on a stub made per call). */
  forwards: readonly ((record: EventRecord) => Promise<unknown>)[];
  /** Keeps a forward running after the response (`waitUntil` of cloudflare:workers). */
  waitUntil: (promise: Promise<unknown>) => void;
  /** A forward failed (logged by the caller). */
  onForwardError?: (error: unknown) => void;
}

/** Creates the hub of one isolate (synchronously: a `HubFactory` that never returns a promise). */
export function durableObjectHub(options: DurableObjectHubOptions): LiveHub {
  const listeners = new Set<RecordedListener>();
  let closed = false;
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(record) {
      if (closed) return;
      for (const listener of listeners) listener(record);
      for (const forward of options.forwards) {
        options.waitUntil(forward(record).catch((error: unknown) => options.onForwardError?.(error)));
      }
    },
    async close() {
      closed = true;
      listeners.clear();
    },
  };
}
