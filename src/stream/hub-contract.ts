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

/** When a publish tap sees the record: after the hub was told (the default) or before. */
export type PublishTapOrder = "after" | "before";

/**
 * The same hub, with `tap` also given every published record. Every method of the contract is
 * delegated by name (not spread: a hub may be a class instance whose methods live on its
 * prototype, and a copy of its fields would go stale), so a method added to `LiveHub` fails the
 * typecheck here until it is delegated.
 */
export function withPublishTap(
  hub: LiveHub,
  tap: (record: EventRecord) => void,
  order: PublishTapOrder = "after",
): LiveHub {
  return {
    subscribe: (listener) => hub.subscribe(listener),
    publish: (record) => {
      if (order === "before") tap(record);
      hub.publish(record);
      if (order === "after") tap(record);
    },
    close: () => hub.close(),
  };
}
