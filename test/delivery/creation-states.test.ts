/**
 * On a shared outbox that reads the destinations' saved states in the routing step
 * (`createDeliveriesWithStates`: the PostgreSQL driver), the records an instance creates leased to
 * itself reach its lanes in those states without one more read of them: a pause made through
 * another instance holds them (as the read did: test/scaleout/admin-any-instance.test.ts), and
 * a resume made through it is followed. An outbox without the method still reads the states
 * before the records reach the lanes.
 *
 * Two gateways in this process on one event store and one shared outbox (the memory driver with
 * `createDeliveriesWithStates` added from its own `createDeliveries` and
 * `listDestinationStates`), on one manual clock that the test never moves: no poll, no claim
 * poll, no renewal runs, so only routing hands records over. The last case: a hub that hands
 * nothing over, where only the instance's own appends (`offerLocal`) route.
 */
import { afterEach, describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import type { Gateway } from "../../src/create-gateway.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import type { DeliverableRecord, Sink } from "../../src/delivery/sink-contract.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { builtinServices } from "../../src/services/registry.ts";
import type { LiveHub } from "../../src/stream/hub-contract.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { esignDelivery, webhookRequest } from "../helpers/signed-requests.ts";
import { onePlainDestinationConfig } from "./helpers/in-process-gateway.ts";
import { createManualTime } from "./helpers/manual-time.ts";

const open: Gateway[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

function recordingSink(destinationId: string) {
  const seen: string[] = [];
  const sink: Sink = {
    destinationId,
    async deliver(record: DeliverableRecord) {
      seen.push(record.id);
      return { ok: true, status: 204 };
    },
    close: async () => {},
  };
  return { sink, seen };
}

/** A shared memory outbox counting its destination state reads; `withStates` adds the optional method. */
function sharedOutbox(withStates: boolean) {
  const inner = memoryOutbox();
  const reads = { count: 0 };
  const outbox: OutboxStore = {
    ...inner,
    shared: true,
    listDestinationStates() {
      reads.count++;
      return inner.listDestinationStates();
    },
  };
  if (withStates) {
    outbox.createDeliveriesWithStates = async (records, cursor, lease) => {
      const created = await inner.createDeliveries(records, cursor, lease);
      return { created, states: await inner.listDestinationStates() };
    };
  }
  return { outbox, reads };
}

async function twoInstances(outbox: OutboxStore) {
  const esignSecret = "esign_creation_states_secret_0123456789";
  const config = onePlainDestinationConfig(esignSecret);
  const store = memoryStore({ services: builtinServices });
  const time = createManualTime(async () => {});
  const build = (sink: Sink) =>
    buildInProcessGateway({
      config,
      resolved: true,
      store,
      clock: time.clock,
      logger: createLogger("silent"),
      delivery: { outbox, sinks: [sink], scheduler: time.scheduler, pollIntervalMs: 1_000, stopGraceMs: 0 },
    });
  const adminSink = recordingSink("plain");
  const routerSink = recordingSink("plain");
  const admin = build(adminSink.sink);
  const router = build(routerSink.sink);
  open.push(admin, router);
  await admin.start();
  await router.start();
  await router.ctx.delivery?.settled();
  const post = async (subjectId: string) => {
    const response = await router.fetch(
      webhookRequest(
        "http://gateway.test",
        "esign",
        await esignDelivery(esignSecret, "agreement.completed", { subjectId }),
      ),
    );
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  return { admin, router, routerSink, post };
}

/**
 * Two instances over a shared outbox (`withStates`: with `createDeliveriesWithStates`): `plain`
 * paused through the admin, one event posted through the router, whose record its lane takes in
 * the paused state (nothing delivered). `before`: the state reads counted before the post.
 */
async function postWhilePaused(withStates: boolean) {
  const { outbox, reads } = sharedOutbox(withStates);
  const { admin, router, routerSink, post } = await twoInstances(outbox);
  await admin.ctx.delivery?.pause("plain");
  const before = reads.count;
  const held = await post("A");
  await expect.poll(async () => (await outbox.getDelivery(held, "plain"))?.state, { timeout: 30_000 }).toBe("paused");
  expect((await router.ctx.delivery?.destinations())?.find((h) => h.id === "plain")?.state).toBe("paused");
  expect(routerSink.seen).toEqual([]);
  return { admin, routerSink, post, held, reads, before };
}

describe("records created leased to the routing instance, with the states read in the routing step", () => {
  it("are held by a pause made through another instance and follow its resume, with no states read of their own", async () => {
    const { admin, routerSink, post, held, reads, before } = await postWhilePaused(true);
    await admin.ctx.delivery?.resume("plain");
    // The next creation reads the resume: both records are delivered.
    const next = await post("B");
    await expect.poll(() => [...routerSink.seen].sort(), { timeout: 30_000 }).toEqual([held, next].sort());
    expect(reads.count).toBe(before);
  }, 60_000);

  it("are handed over after a read of the states when the outbox cannot read them in the routing step", async () => {
    const { reads, before } = await postWhilePaused(false);
    expect(reads.count).toBeGreaterThan(before);
  }, 60_000);

  it("are routed from this instance's own appends when the hub hands nothing over", async () => {
    // A hub that lost every wake-up (and a poll an hour away): only the local copies route.
    const silentHub: LiveHub = { subscribe: () => () => {}, publish: () => {}, close: async () => {} };
    const { outbox } = sharedOutbox(true);
    const config = onePlainDestinationConfig("esign_local_routing_secret_0123456789");
    const sink = recordingSink("plain");
    const gateway = buildInProcessGateway({
      config,
      resolved: true,
      hub: silentHub,
      logger: createLogger("silent"),
      delivery: { outbox, sinks: [sink.sink], pollIntervalMs: 3_600_000, stopGraceMs: 0 },
    });
    open.push(gateway);
    await gateway.start();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const delivery = await esignDelivery("esign_local_routing_secret_0123456789", "agreement.completed");
      const response = await gateway.fetch(webhookRequest("http://gateway.test", "esign", delivery));
      expect(response.status).toBe(202);
      ids.push(((await response.json()) as { id: string }).id);
    }
    await expect.poll(() => [...sink.seen].sort(), { timeout: 30_000 }).toEqual([...ids].sort());
    expect(await outbox.readCursor()).toBe(3);
  }, 60_000);
});
