/**
 * Retention: events older than `retentionDays` leave the API at once and the store when
 * maintenance runs. In process with the memory store and an injected clock.
 */
import { expect, it } from "vitest";
import { esignDelivery, readAnswer, staffingDelivery, webhookRequest } from "../helpers/signed-requests.ts";
import { createTestGateway, IN_PROCESS_ORIGIN } from "../ingress/gateway-fixtures.ts";

const HOUR = 3_600_000;

it("drops events older than retentionDays from GET /events after runMaintenance", async () => {
  const gw = createTestGateway({ retentionDays: 1 });
  const accept = async (request: Request) => {
    const answer = await readAnswer(await gw.gateway.fetch(request));
    expect(answer.status).toBe(202);
    return answer.body.id as string;
  };
  const listed = async () => {
    const body = (await (await gw.request("/events?limit=500")).json()) as { events: { id: string }[] };
    return body.events.map((e) => e.id);
  };
  const detailStatus = async (id: string) => (await gw.request(`/events/${id}`)).status;

  const old = await accept(webhookRequest(IN_PROCESS_ORIGIN, "esign", await esignDelivery(gw.secrets.esign)));
  gw.advance(12 * HOUR);
  const newer = await accept(
    webhookRequest(
      IN_PROCESS_ORIGIN,
      "staffing",
      await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { now: gw.now() }),
    ),
  );
  expect(await gw.gateway.runMaintenance()).toBe(0);
  expect(await listed()).toEqual([newer, old]);

  gw.advance(13 * HOUR); // `old` is 25 h old, `newer` 13 h
  // Past retention the API hides the event at once, before maintenance purged it...
  expect(await listed()).toEqual([newer]);
  expect(await detailStatus(old)).toBe(404);
  expect(await gw.store.get(old)).toBeDefined();
  // ...and maintenance removes it from the store.
  expect(await gw.gateway.runMaintenance()).toBe(1);
  expect(await gw.store.get(old)).toBeUndefined();
  expect(await listed()).toEqual([newer]);
  expect(await detailStatus(newer)).toBe(200);

  gw.advance(12 * HOUR);
  expect(await gw.gateway.runMaintenance()).toBe(1);
  expect(await listed()).toEqual([]);
  expect(await detailStatus(newer)).toBe(404);
  expect(await gw.store.get(newer)).toBeUndefined();
});
