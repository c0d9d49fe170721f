/**
 * Erasure interrupted by `kill -9` (docs/data-lifecycle.md), through real gateway processes on
 * SQLite and on a real redis-server: an erasure of 3,000 events is killed (synchronised on the
 * newest event having become a tombstone while the oldest is not yet), then the gateway restarts:
 * every event ends erased and `gateway.events.erased` is recorded exactly once, with the full count.
 * (Split from erasure-reaches-every-copy.test.ts so that the two files run on both workers at once;
 * both use erasure-harness.ts.)
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, test } from "vitest";
import { adminGet } from "../helpers/signed-requests.ts";
import {
  cleanUp,
  gatewayEvents,
  get,
  post,
  restart,
  sendMany,
  startSetup,
  storeBytes,
  until,
} from "./erasure-harness.ts";

afterEach(cleanUp);

describe.each(["sqlite", "redis"] as const)("erasure interrupted by kill -9 (%s store)", (kind) => {
  test("finishes after the restart: every event erased, audited exactly once with the full count", async () => {
    const setup = await startSetup(kind, { failFast: false });
    const tag = randomBytes(6).toString("hex");
    const email = `zzcrash${tag}@erasure.example`;
    const agreement = `ag-crash-${tag}`;
    const subject = `agreements/${agreement}`;
    const COUNT = 3000;
    const ids = await sendMany(setup, agreement, email, COUNT);
    const newest = (await get(setup, `/events?subject=${encodeURIComponent(subject)}&limit=1`)).events[0].id;
    expect((await post(setup, "/events/erase", { subject, dryRun: true })).body.events).toBe(COUNT);

    // The erasure runs newest first; kill -9 once the newest is a tombstone.
    const erasing = post(setup, "/events/erase", { subject }).catch((error: unknown) => error);
    await until("the erasure to make progress", async () => {
      const event = await adminGet(setup.gateway.url, `/events/${newest}`, setup.secrets.adminKey);
      return event.body.state === "erased" ? true : undefined;
    });
    await setup.gateway.kill("SIGKILL");
    expect(await erasing).toBeInstanceOf(Error);

    await restart(setup);
    const audit = await until("the audit of the finished erasure", async () => {
      const audits = await gatewayEvents(setup, "gateway.events.erased");
      return audits.length > 0 ? audits : undefined;
    });
    // The restart found it unfinished (`resumed`) and finished it: one audit, the full count.
    expect(audit).toHaveLength(1);
    expect(audit[0].event.data).toMatchObject({
      selection: { subject },
      events: COUNT,
      already_erased: 0,
      resumed: true,
      deliveries_cancelled: expect.any(Number),
    });
    expect((await post(setup, "/events/erase", { subject, dryRun: true })).body).toEqual({
      dryRun: true,
      events: 0,
      already_erased: COUNT,
      deliveries_cancelled: 0,
    });
    expect((await get(setup, `/events/${ids[0]}`)).state).toBe("erased");
    // Asked again: answered from the same audit event, nothing recorded twice.
    const again = await post(setup, "/events/erase", { subject });
    // (It may join the resumed run if that is still compacting: the same report, the same audit.)
    expect(again.body.audit_event_id).toBe(audit[0].event.id);
    expect(again.body.events + again.body.already_erased).toBe(COUNT);
    expect(await gatewayEvents(setup, "gateway.events.erased")).toHaveLength(1);
    expect(await storeBytes(setup)).not.toContain(`zzcrash${tag}`);
  }, 600_000);
});
