/**
 * Ingress on Workers with the Durable Object store: copies of one delivery racing on concurrent
 * requests give one event; several active secrets per source (key rotation through
 * `STAFFING_WEBHOOK_SECRETS`); the event log API reads the durable log with filters and cursors.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admin, esignBody, postEsign, postStaffing, postWebhook } from "./gateway-client.ts";
import { STAFFING_SECRET, staffingSignature } from "./reference-signatures.ts";

describe("ingress on the Durable Object store", () => {
  it("records one event when 20 copies of a delivery race", async () => {
    const { body, eventId } = esignBody("evt-race");
    const responses = await Promise.all(Array.from({ length: 20 }, () => postEsign(body)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    // The others saw either the recorded event (200 duplicate) or the claim in progress (409).
    expect(statuses.every((s) => s === 202 || s === 200 || s === 409)).toBe(true);
    const ids = new Set(
      await Promise.all(
        responses.filter((r) => r.status !== 409).map(async (r) => ((await r.json()) as { id: string }).id),
      ),
    );
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    const again = await postEsign(body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id, duplicate: true });
    const log = (await (await admin(`/events?source=esign&limit=500`)).json()) as { events: { id: string }[] };
    expect(log.events.filter((e) => e.id === id)).toHaveLength(1);
    expect(eventId).toMatch(/^evt-race-/);
  });

  it("answers the rest of the ingress table: 400 invalid_body, 413 payload_too_large, 401 missing signature", async () => {
    const notObject = "[1,2,3]";
    const invalid = await postEsign(notObject);
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe("invalid_body");
    const big = JSON.stringify({ event: "agreement.completed", event_id: "evt-big", pad: "x".repeat(1024 * 1024) });
    const tooLarge = await postEsign(big);
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const unsigned = await postWebhook("esign", esignBody("evt-unsigned").body, {});
    expect(unsigned.status).toBe(401);
    expect(((await unsigned.json()) as { error: { details: unknown } }).error.details).toEqual({
      reason: "missing_signature",
    });
    const metrics = await admin("/metrics");
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("gateway_webhooks_rejected_total");
  });

  it("accepts every active staffing secret (rotation) and refuses any other", async () => {
    const [older, newer] = env.STAFFING_WEBHOOK_SECRETS.split(",") as [string, string];
    const body = JSON.stringify({ event: "staffing.completed", staffingRequestId: "sr_rot", status: "completed" });
    for (const secret of [STAFFING_SECRET, older, newer]) expect((await postStaffing(body, secret)).status).toBe(202);
    const t = Math.floor(Date.now() / 1000);
    const refused = await postWebhook("staffing", body, {
      "x-svc-signature": await staffingSignature("workerd_retired_staffing_secret_00", body, t),
      "x-svc-delivery-id": `del-${crypto.randomUUID()}`,
    });
    expect(refused.status).toBe(401);
  });

  it("serves the event log from the durable store: filters, exact cursor pages, one event by id", async () => {
    const subject = `agreements/ag-log-${crypto.randomUUID()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const eventId = `evt-log-${crypto.randomUUID()}`;
      const body = JSON.stringify({
        event: "agreement.signed",
        event_type: "agreement.signed",
        event_id: eventId,
        agreement_id: subject.slice("agreements/".length),
      });
      const response = await postEsign(body);
      expect(response.status).toBe(202);
      ids.push(((await response.json()) as { id: string }).id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const query: string = `/events?subject=${encodeURIComponent(subject)}&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const response = (await (await admin(query)).json()) as { events: { id: string }[]; next_cursor: string | null };
      seen.push(...response.events.map((e) => e.id));
      cursor = response.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([...ids].reverse());
    const one = await admin(`/events/${ids[0]}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ id: ids[0], event: { type: "agreement.signed", subject } });
    expect((await admin("/events", { headers: { authorization: "Bearer nope" } })).status).toBe(401);
  });
});
