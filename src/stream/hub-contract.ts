/**
 * The live hub contract: how the ingress tells the rest of the gateway that an event was durably
 * recorded. The ingress publishes after the store's append resolved; the delivery engine and the
 * live stream subscribe. A hub carries notifications only: whoever needs to resume or catch up
 * reads the store's event log (`StoreDriver.readAfter`), so a hub may drop, batch or cross process
 * boundaries (a Redis pub/sub hub publishes the record's id and seq and hands its subscribers the
 * record read back from the store). Drivers live in adapters/hub/ and are listed in
 * adapters/hub/registry.ts.
 *
 * Subscribers run after the webhook's answer is decided and must not block. The gateway wraps
 * every subscriber (`isolateListeners`) so that a failing one is reported and never affects the
 * acknowledgement or the other subscribers; drivers need not guard against throwing listeners.
 */
import type { EventRecord } from "../store/contract.ts";

export type RecordedListener = (record: EventRecord) => void;

export interface LiveHub {
  /** Registers a listener; returns the function that removes it. */
  subscribe(listener: RecordedListener): () => void;
  /** Announces a durably recorded event (called once per append, after it resolved). */
  publish(record: EventRecord): void;
  /** Stops delivering and releases connections. */
  close(): Promise<void>;
}

/** One typed factory per hub driver (adapters/hub/<name>.ts); drivers that connect somewhere resolve once connected. */
export type HubFactory<Options> = (options: Options) => LiveHub | Promise<LiveHub>;

/** The same hub, each subscriber wrapped so that what it throws goes to `onListenerError`. */
export function isolateListeners(hub: LiveHub, onListenerError: (error: unknown) => void): LiveHub {
  return {
    subscribe: (listener) =>
      hub.subscribe((record) => {
        try {
          listener(record);
        } catch (error) {
          onListenerError(error);
        }
      }),
    publish: (record) => hub.publish(record),
    close: () => hub.close(),
  };
}
