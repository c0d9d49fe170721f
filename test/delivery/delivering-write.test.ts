/**
 * A delivery's "delivering" is written only for an attempt still running
 * DELIVERING_WRITE_DELAY_MS after it started (src/delivery/destination-lane.ts): an attempt that
 * ends sooner writes its outcome alone (one outbox write per attempt, not two), a slow one is
 * shown "delivering" once the delay is over, and its outcome follows. One in-process gateway on
 * a memory outbox that records every save, on a manual clock.
 */
import { afterEach, describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import type { Gateway } from "../../src/create-gateway.ts";
import { DELIVERING_WRITE_DELAY_MS } from "../../src/delivery/destination-lane.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import type { DeliverableRecord, Sink } from "../../src/delivery/sink-contract.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { esignDelivery, webhookRequest } from "../helpers/signed-requests.ts";
import { onePlainDestinationConfig } from "./helpers/in-process-gateway.ts";
import { createManualTime } from "./helpers/manual-time.ts";

const SECRET = "esign_delivering_write_secret_0123456789";

const open: Gateway[] = [];
/** Releases attempts a failed test left held, so the gateways can close. */
const releases: (() => void)[] = [];
afterEach(async () => {
  for (const release of releases.splice(0)) release();
  await Promise.all(open.splice(0).map((gateway) => gateway.close()));
});

describe("the delivering write", () => {
  it("is left out for an attempt that ends within the delay, and written for one that runs longer", async () => {
    const inner = memoryOutbox();
    const saved: string[] = [];
    const outbox: OutboxStore = {
      ...inner,
      async saveDeliveries(records) {
        for (const r of records) saved.push(`${r.eventId}:${r.state}`);
        return inner.saveDeliveries(records);
      },
    };
    /** Events whose attempt is held until the test releases it. */
    const held = new Map<string, () => void>();
    let holdNext = false;
    const seen: string[] = [];
    const sink: Sink = {
      destinationId: "plain",
      async deliver(record: DeliverableRecord) {
        seen.push(record.id);
        if (holdNext)
          await new Promise<void>((resolve) => {
            held.set(record.id, resolve);
            releases.push(resolve);
          });
        return { ok: true, status: 204 };
      },
      close: async () => {},
    };
    // Settling would wait for the held attempt: the test polls for what the timers started.
    const time = createManualTime(async () => {});
    const gateway = buildInProcessGateway({
      config: onePlainDestinationConfig(SECRET),
      resolved: true,
      clock: time.clock,
      logger: createLogger("silent"),
      delivery: { outbox, sinks: [sink], scheduler: time.scheduler, pollIntervalMs: 3_600_000, stopGraceMs: 0 },
    });
    open.push(gateway);
    await gateway.start();
    const post = async () => {
      const delivery = await esignDelivery(SECRET, "agreement.completed");
      const response = await gateway.fetch(webhookRequest("http://gateway.test", "esign", delivery));
      expect(response.status).toBe(202);
      return ((await response.json()) as { id: string }).id;
    };

    // A fast attempt: its outcome is the only save, no timer is left behind for it.
    const fast = await post();
    await expect
      .poll(async () => (await outbox.getDelivery(fast, "plain"))?.state, { timeout: 30_000 })
      .toBe("delivered");
    expect(saved.filter((s) => s.startsWith(`${fast}:`))).toEqual([`${fast}:delivered`]);

    // A slow attempt: nothing before the delay is over, "delivering" once it is, then the outcome.
    holdNext = true;
    const slow = await post();
    await expect.poll(() => held.has(slow), { timeout: 30_000 }).toBe(true);
    await time.advance(DELIVERING_WRITE_DELAY_MS - 1);
    expect(saved.filter((s) => s.startsWith(`${slow}:`))).toEqual([]);
    expect((await outbox.getDelivery(slow, "plain"))?.state).toBe("pending");
    await time.advance(1);
    await expect
      .poll(async () => (await outbox.getDelivery(slow, "plain"))?.state, { timeout: 30_000 })
      .toBe("delivering");
    held.get(slow)?.();
    await expect
      .poll(async () => (await outbox.getDelivery(slow, "plain"))?.state, { timeout: 30_000 })
      .toBe("delivered");
    expect(saved.filter((s) => s.startsWith(`${slow}:`))).toEqual([`${slow}:delivering`, `${slow}:delivered`]);
    expect(seen).toEqual([fast, slow]);
  }, 60_000);
});
