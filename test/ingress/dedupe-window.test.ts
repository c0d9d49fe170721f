/**
 * The dedupe window, with an injected clock: redeliveries inside the window (and inside the
 * upstreams' retry horizons with the default 72 h) are duplicates; after the window, while the
 * event is still in the log, a redelivery is still a 200 duplicate with the same id, because the
 * id is deterministic and `append` is idempotent on it. Only once retention dropped the event
 * does a redelivery record it again (under the same id).
 */
import { expect, it } from "vitest";
import { toDedupeKey } from "../../src/store/contract.ts";
import {
  esignDelivery,
  readAnswer,
  type SignedDelivery,
  staffingDelivery,
  webhookRequest,
} from "../helpers/signed-requests.ts";
import { createTestGateway, IN_PROCESS_ORIGIN, type TestGateway } from "./gateway-fixtures.ts";

const HOUR = 3_600_000;

const send = async (gw: TestGateway, source: string, delivery: SignedDelivery) =>
  readAnswer(await gw.gateway.fetch(webhookRequest(IN_PROCESS_ORIGIN, source, delivery)));

async function loggedIds(gw: TestGateway): Promise<string[]> {
  const body = (await (await gw.request("/events?limit=500")).json()) as { events: { id: string }[] };
  return body.events.map((e) => e.id);
}

it("covers the upstreams' retry horizons with the default 72 h window", async () => {
  const gw = createTestGateway();
  const esign = await esignDelivery(gw.secrets.esign);
  const first = await send(gw, "esign", esign);
  expect(first.status).toBe(202);
  const staffingId = crypto.randomUUID();
  const staffing = await send(
    gw,
    "staffing",
    await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { uniqueId: staffingId, now: gw.now() }),
  );
  expect(staffing.status).toBe(202);

  // e-sign retries for up to 24 h; staffing at 1 m, 5 m, 30 m, 2 h, 12 h (re-signed each time).
  gw.advance(12 * HOUR);
  const resigned = await staffingDelivery(gw.secrets.staffing, "candidate.accepted", {
    uniqueId: staffingId,
    now: gw.now(),
  });
  expect(await send(gw, "staffing", resigned)).toMatchObject({
    status: 200,
    body: { id: staffing.body.id, duplicate: true },
  });
  gw.advance(12 * HOUR);
  expect(await send(gw, "esign", esign)).toMatchObject({ status: 200, body: { id: first.body.id, duplicate: true } });
  gw.advance(47 * HOUR);
  expect(await send(gw, "esign", esign)).toMatchObject({ status: 200, body: { id: first.body.id, duplicate: true } });
  expect(await loggedIds(gw)).toHaveLength(2);
});

it("keeps answering duplicate after a short window while the event is in the log", async () => {
  const gw = createTestGateway({ retentionDays: 30 }, { dedupeWindowSeconds: 3600 });
  const delivery = await esignDelivery(gw.secrets.esign);
  const first = await send(gw, "esign", delivery);
  expect(first).toMatchObject({ status: 202, body: { duplicate: false } });
  const duplicate = { status: 200, body: { id: first.body.id, duplicate: true } };

  gw.advance(HOUR - 1);
  expect(await send(gw, "esign", delivery)).toMatchObject(duplicate);

  // Past the window: the dedupe mark expired, but the deterministic id is still in the log.
  gw.advance(2 * HOUR);
  expect(await send(gw, "esign", delivery)).toMatchObject(duplicate);
  // Maintenance drops expired marks, not events inside retention.
  gw.advance(2 * HOUR);
  expect(await gw.gateway.runMaintenance()).toBe(0);
  expect(await send(gw, "esign", delivery)).toMatchObject(duplicate);
  expect(await loggedIds(gw)).toEqual([first.body.id]);

  // Past retention the event is gone: a (very late) redelivery is recorded anew, same id.
  gw.advance(31 * 24 * HOUR);
  expect(await gw.gateway.runMaintenance()).toBe(1);
  expect(await loggedIds(gw)).toEqual([]);
  expect(await send(gw, "esign", delivery)).toMatchObject({
    status: 202,
    body: { id: first.body.id, duplicate: false },
  });
});

it("hands the per-source window to the store's dedupe mark", async () => {
  const gw = createTestGateway({}, { dedupeWindowSeconds: 600 });
  const uniqueId = crypto.randomUUID();
  const make = () => staffingDelivery(gw.secrets.staffing, "staffing.calling", { uniqueId, now: gw.now() });
  const first = await send(gw, "staffing", await make());
  expect(first.status).toBe(202);
  const key = toDedupeKey("staffing", `del-${uniqueId}`);
  gw.advance(599_000);
  expect(await gw.store.claim(key, 1000)).toEqual({ status: "duplicate", id: first.body.id });
  gw.advance(1_000);
  // The mark expired after 600 s: the identity can be claimed again (and `append` then finds the id).
  expect(await gw.store.claim(key, 1000)).toEqual({ status: "claimed" });
  await gw.store.release(key);
  expect(await send(gw, "staffing", await make())).toMatchObject({ status: 200, body: { id: first.body.id } });
});
