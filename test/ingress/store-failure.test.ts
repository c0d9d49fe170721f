/**
 * A store that cannot record answers 503 store_unavailable with Retry-After and never 2xx, so
 * the upstream retries; once the store is back, every retried delivery is accepted and in the
 * log. In process (createGateway + the memory store's `failWrites` switch).
 */
import { expect, it } from "vitest";
import {
  esignDelivery,
  expectErrorEnvelope,
  readAnswer,
  type SignedDelivery,
  staffingDelivery,
  webhookRequest,
} from "../helpers/signed-requests.ts";
import { createTestGateway, IN_PROCESS_ORIGIN, type TestGateway } from "./gateway-fixtures.ts";

async function deliveries(gw: TestGateway): Promise<[string, SignedDelivery][]> {
  return [
    ["esign", await esignDelivery(gw.secrets.esign, "agreement.completed")],
    ["esign", await esignDelivery(gw.secrets.esign, "agreement.signed")],
    ["staffing", await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { now: gw.now() })],
    ["staffing", await staffingDelivery(gw.secrets.staffing, "staffing.failed", { now: gw.now(), deliveryId: null })],
  ];
}

const send = (gw: TestGateway, source: string, delivery: SignedDelivery) =>
  gw.gateway.fetch(webhookRequest(IN_PROCESS_ORIGIN, source, delivery, { "x-request-id": "req-store-down" }));

/** The recorded webhooks (the gateway's own events, e.g. `gateway.store.recovered`, aside). */
async function loggedIds(gw: TestGateway): Promise<string[]> {
  const response = await gw.request("/events?limit=500");
  expect(response.status).toBe(200);
  const { events } = (await response.json()) as { events: { id: string; event: { source: string } }[] };
  return events.filter((e) => e.event.source !== "/gateway").map((e) => e.id);
}

it("answers 503 store_unavailable with Retry-After while writes fail, then accepts every retry", async () => {
  const gw = createTestGateway();
  const batch = await deliveries(gw);
  gw.store.failWrites = true;

  // Twice: a failed write must release its claim, or the retry would get 409 in_progress.
  for (let attempt = 0; attempt < 2; attempt++) {
    for (const [source, delivery] of batch) {
      const response = await send(gw, source, delivery);
      const retryAfter = response.headers.get("retry-after");
      expect(response.headers.get("x-request-id")).toBe("req-store-down");
      await expectErrorEnvelope(response, 503, "store_unavailable");
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    }
  }
  expect(await loggedIds(gw)).toEqual([]);

  gw.store.failWrites = false;
  const accepted: string[] = [];
  for (const [source, delivery] of batch) {
    const answer = await readAnswer(await send(gw, source, delivery));
    expect(answer.status).toBe(202);
    expect(answer.body.duplicate).toBe(false);
    accepted.push(answer.body.id);
  }
  expect(new Set(accepted).size).toBe(batch.length);
  expect((await loggedIds(gw)).sort()).toEqual([...accepted].sort());

  // And they are now recorded: another retry is a duplicate, even if the store fails again.
  gw.store.failWrites = true;
  const [source, delivery] = batch[0]!;
  expect(await readAnswer(await send(gw, source, delivery))).toMatchObject({
    status: 200,
    body: { id: accepted[0], duplicate: true },
  });
});

it("never answers 2xx for deliveries fired at once while the store fails", async () => {
  const gw = createTestGateway();
  const batch = await deliveries(gw);
  gw.store.failWrites = true;
  const statuses = await Promise.all(
    [...batch, ...batch, ...batch].map(async ([source, delivery]) => (await send(gw, source, delivery)).status),
  );
  // Copies racing a failing write may also see the in-flight claim (409); none may see 2xx.
  for (const status of statuses) expect([503, 409]).toContain(status);
  expect(statuses).toContain(503);
  expect(await loggedIds(gw)).toEqual([]);
});
