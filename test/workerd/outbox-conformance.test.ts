/**
 * The outbox conformance and lease suites (test/conformance/outbox-conformance.ts,
 * outbox-lease-conformance.ts) inside workerd against the Durable Object outbox. Storage can only be touched inside its object, so the harness hands the
 * suite an outbox whose every call runs inside the object (runInDurableObject) on the driver kept
 * there; `reopen` drops that driver and builds a new one on the same storage.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createDurableObjectOutbox } from "../../adapters/cloudflare/durable-object-outbox.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { type OutboxHarness, testOutboxDriver } from "../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../conformance/outbox-lease-conformance.ts";

/** The driver in use per object (kept inside the object's isolate). */
const drivers = new Map<string, OutboxStore>();

function remoteOutbox(name: string): OutboxStore {
  const stub = env.GATEWAY_STORE.get(env.GATEWAY_STORE.idFromName(name));
  // Separate requests into an object may arrive out of call order under load; in production the
  // engine calls the driver inside the object, in order. Chaining keeps the suite's call order.
  let chain: Promise<unknown> = Promise.resolve();
  const call =
    <K extends keyof OutboxStore>(method: K) =>
    (...args: unknown[]) => {
      const result = chain.then(() =>
        runInDurableObject(stub, (_instance, state) => {
          let driver = drivers.get(name);
          if (!driver) {
            driver = createDurableObjectOutbox(state.storage);
            drivers.set(name, driver);
          }
          return (driver[method] as (...a: unknown[]) => unknown)(...args);
        }),
      );
      chain = result.catch(() => {});
      return result;
    };
  const methods = [
    "readCursor",
    "createDeliveries",
    "saveDeliveries",
    "getDelivery",
    "listByEvent",
    "listDeliveries",
    "listActive",
    "countByState",
    "listDestinationStates",
    "saveDestinationState",
    "purge",
    "claimDue",
    "renewLeases",
  ] as const;
  const outbox = Object.fromEntries(methods.map((m) => [m, call(m)])) as unknown as OutboxStore;
  return {
    ...outbox,
    name: "durable-object",
    close: async () => {
      await call("close")();
      drivers.delete(name);
    },
  };
}

const names = new WeakMap<OutboxStore, string>();

const harness: OutboxHarness = {
  async open() {
    const name = `outbox-${crypto.randomUUID()}`;
    const outbox = remoteOutbox(name);
    names.set(outbox, name);
    return outbox;
  },
  async reopen(outbox) {
    const name = names.get(outbox) as string;
    await outbox.close();
    const again = remoteOutbox(name);
    names.set(again, name);
    return again;
  },
};

testOutboxDriver("durable-object", harness);
testOutboxLeases("durable-object", harness);
