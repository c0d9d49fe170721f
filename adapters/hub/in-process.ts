/**
 * The memory live hub driver (configured as `hub.driver: "in-process"`): subscribers are functions
 * in this process, called in turn for every published record. One gateway process (or one Worker isolate) sees its own appends only.
 */
import type { HubFactory, LiveHub, RecordedListener } from "../../src/stream/hub-contract.ts";

export type InProcessHubOptions = Record<string, never>;

export const inProcessHub = ((_options?: InProcessHubOptions): LiveHub => {
  const listeners = new Set<RecordedListener>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(record) {
      for (const listener of listeners) listener(record);
    },
    async close() {
      listeners.clear();
    },
  };
}) satisfies HubFactory<InProcessHubOptions | undefined>;
