/**
 * In-process notification that an event was durably recorded. The ingress publishes after the
 * store's append resolved; the outbox and the live stream subscribe. Subscribers run after the
 * webhook's answer is decided and must not throw or block: a failing subscriber is logged and
 * never affects the acknowledgement or the other subscribers.
 */
import type { EventRecord } from "../store/contract.ts";

export type RecordedListener = (record: EventRecord) => void;

export interface EventHub {
  /** Registers a listener; returns the function that removes it. */
  subscribe(listener: RecordedListener): () => void;
  publish(record: EventRecord): void;
}

export function createEventHub(onListenerError: (error: unknown) => void): EventHub {
  const listeners = new Set<RecordedListener>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(record) {
      for (const listener of listeners) {
        try {
          listener(record);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
  };
}
