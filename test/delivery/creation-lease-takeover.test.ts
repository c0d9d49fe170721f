/**
 * On a shared outbox, the instance that routes an event creates its delivery records leased to
 * itself (no claim between routing and the first attempt: docs/several-instances.md). If that
 * instance dies with them (here: its attempt hangs and its timers never fire again, so it never
 * renews), another instance takes them over once the lease ends, and not before. The records of
 * a destination ordered by subject are created unleased and claimed subject by subject (here by
 * the router at once, woken by its routing); they are taken over the same way.
 *
 * Two gateways in this process on one event store and one outbox marked shared (the memory
 * driver, whose leases pass the same conformance suite as the PostgreSQL and Redis ones), on one
 * manual clock: the router's scheduler never runs (a dead process), the survivor's runs when the
 * test moves time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { Gateway } from "../../src/create-gateway.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import type { Scheduler } from "../../src/delivery/scheduler.ts";
import type { DeliverableRecord, Sink } from "../../src/delivery/sink-contract.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { esignDelivery, webhookRequest } from "../helpers/signed-requests.ts";
import { makeWhsecSecret } from "./helpers/in-process-gateway.ts";
import { createManualTime } from "./helpers/manual-time.ts";

const LEASE_MS = 30_000;
const POLL_MS = 1_000;

const open: Gateway[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

/** A sink that records what it is handed; `hang` keeps every attempt open until it is aborted. */
function recordingSink(destinationId: string, hang: boolean) {
  const seen: string[] = [];
  const sink: Sink = {
    destinationId,
    async deliver(record: DeliverableRecord, signal: AbortSignal) {
      seen.push(record.id);
      if (!hang) return { ok: true, status: 204 };
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      return { ok: false, error: "attempt aborted" };
    },
    close: async () => {},
  };
  return { sink, seen };
}

/** A scheduler whose timers never fire: a process that stopped running. */
const frozen: Scheduler = { setTimer: () => () => {} };

/** An http destination nothing listens on (the sinks stand in for it); `ordered`: by subject. */
const destination = (id: string, secrets: string[], ordered: boolean) => ({
  id,
  type: "http",
  url: `http://127.0.0.1:9/${id}`,
  secrets,
  allowCidrs: ["127.0.0.1/32"],
  ...(ordered ? { ordering: "subject" } : {}),
});

/**
 * Two gateways in this process on one event store and one outbox marked shared, on one manual
 * clock, the esign source routed to the destinations `ordered` names (each mapped to whether it
 * is ordered by subject): the first's scheduler never runs (a process that stopped), the
 * survivor's runs when the test moves time. Each is given its own sinks for those destinations.
 */
async function twoInstances(
  esignSecret: string,
  ordered: Record<string, boolean>,
  sinks: { first: Sink[]; survivor: Sink[] },
) {
  const secrets = [makeWhsecSecret()];
  const ids = Object.keys(ordered);
  const config = resolveConfig(
    {
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "esign", secrets: [esignSecret] }],
      destinations: ids.map((id) => destination(id, secrets, ordered[id] as boolean)),
      routes: [{ destinations: ids }],
      log: { level: "silent" },
    },
    {},
  );
  const store = memoryStore({ services: builtinServices });
  const outbox: OutboxStore = { ...memoryOutbox(), shared: true };
  let survivor: Gateway | undefined;
  const time = createManualTime(async () => {
    await survivor?.ctx.delivery?.settled();
  });
  const build = (instanceSinks: Sink[], scheduler: Scheduler) =>
    buildInProcessGateway({
      config,
      resolved: true,
      store,
      clock: time.clock,
      logger: createLogger("silent"),
      delivery: { outbox, sinks: instanceSinks, scheduler, pollIntervalMs: POLL_MS, leaseMs: LEASE_MS, stopGraceMs: 0 },
    });
  const first = build(sinks.first, frozen);
  survivor = build(sinks.survivor, time.scheduler);
  open.push(first, survivor);
  await first.start();
  await survivor.start();
  /** Posts one signed `agreement.completed` of `subjectId` to `gateway`: 202, the event's id. */
  const post = async (gateway: Gateway, subjectId: string) => {
    const delivery = await esignDelivery(esignSecret, "agreement.completed", { subjectId });
    const response = await gateway.fetch(webhookRequest("http://gateway.test", "esign", delivery));
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  return { first, survivor, outbox, time, post };
}

describe("records created leased to the routing instance", () => {
  it("are taken over by another instance when the router dies, once its lease ended", async () => {
    const routerPlain = recordingSink("plain", true);
    const routerOrdered = recordingSink("ordered", true);
    const survivorPlain = recordingSink("plain", false);
    const survivorOrdered = recordingSink("ordered", false);
    const {
      first: router,
      outbox,
      time,
      post,
    } = await twoInstances(
      "esign_creation_lease_secret_0123456789",
      { plain: false, ordered: true },
      { first: [routerPlain.sink, routerOrdered.sink], survivor: [survivorPlain.sink, survivorOrdered.sink] },
    );

    const id = await post(router, "A");
    // The router's hub wakes its dispatcher, which routes the event and starts the attempt of
    // the record it created leased to itself, without a claim (its timers never run).
    await expect.poll(() => routerPlain.seen, { timeout: 30_000 }).toEqual([id]);
    // Its "delivering" is written only once the attempt has run DELIVERING_WRITE_DELAY_MS, on
    // the router's timers, which never fire: the record says "pending", under the router's lease.
    expect((await outbox.getDelivery(id, "plain"))?.state).toBe("pending");
    // The ordered destination's record was created unleased and claimed by the router at once
    // (its claim is woken by the routing, not by a timer).
    await expect.poll(() => routerOrdered.seen, { timeout: 30_000 }).toEqual([id]);

    // The router never renews. Until its leases end, the survivor's claims leave the records alone.
    await time.advance(LEASE_MS - POLL_MS);
    expect(survivorPlain.seen).toEqual([]);
    expect(survivorOrdered.seen).toEqual([]);
    await time.advance(2 * POLL_MS);
    expect(survivorPlain.seen).toEqual([id]);
    expect(survivorOrdered.seen).toEqual([id]);
    expect((await outbox.getDelivery(id, "plain"))?.state).toBe("delivered");
    expect((await outbox.getDelivery(id, "ordered"))?.state).toBe("delivered");
    expect(routerPlain.seen).toEqual([id]);
  }, 60_000);

  it("a stalled instance whose leases lapsed does not attempt an older event of a subject the survivor went on with", async () => {
    // The stalled instance's first attempt hangs until the test lets it end (the stall); the
    // survivor answers at once.
    const stalledSeen: string[] = [];
    let endStall = () => {};
    const stallEnded = new Promise<void>((resolve) => {
      endStall = resolve;
    });
    const stalledSink: Sink = {
      destinationId: "ordered",
      async deliver(record: DeliverableRecord) {
        stalledSeen.push(record.id);
        if (stalledSeen.length === 1) await stallEnded;
        return { ok: true, status: 204 };
      },
      close: async () => {},
    };
    const survivorSink = recordingSink("ordered", false);
    const {
      first: stalled,
      time,
      post,
    } = await twoInstances(
      "esign_lapsed_lease_secret_0123456789",
      { ordered: true },
      { first: [stalledSink], survivor: [survivorSink.sink] },
    );

    // Three events of one subject, posted to the instance that then stalls: it claims the
    // subject and starts the first attempt, which hangs; the other two wait behind it in its lane.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await post(stalled, "S"));
    await expect.poll(() => stalledSeen, { timeout: 30_000 }).toEqual([ids[0]]);

    // Its leases end unrenewed; the survivor takes the subject over and delivers all three.
    await time.advance(LEASE_MS + 2 * POLL_MS);
    await expect.poll(() => survivorSink.seen, { timeout: 30_000 }).toEqual(ids);

    // The stall ends: the hung attempt answers. The lane's next record's lease has ended, so it
    // renews before attempting, learns the records went to the survivor and lets them go: the
    // destination never sees the second event again after the third.
    endStall();
    await stalled.ctx.delivery?.settled();
    const lane = async () => (await stalled.ctx.delivery?.destinations())?.find((d) => d.id === "ordered");
    await expect.poll(async () => (await lane())?.waiting, { timeout: 30_000 }).toBe(0);
    expect((await lane())?.inflight).toBe(0);
    expect(stalledSeen).toEqual([ids[0]]);
  }, 60_000);
});
