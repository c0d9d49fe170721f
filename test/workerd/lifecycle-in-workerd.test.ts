/**
 * The data lifecycle inside workerd, on the Durable Object store: erasure by subject leaves no
 * trace of the bodies in the shard's tables and keeps the upstream's retry a duplicate; a
 * per-type retention rule removes exactly the aged event it covers; dead letters become one
 * `gateway.deliveries.dead` event delivered to the destination routed with `sources: ["gateway"]`.
 */

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admin, failHooks, postEsign, type Received, received, waitFor } from "./gateway-client.ts";

const DAY = 86_400_000;
const shard = () => env.GATEWAY_STORE.get(env.GATEWAY_STORE.idFromName("store:0/1"));

/** Every event row of the store shard, as text. */
const storedRows = () =>
  runInDurableObject(shard(), (_instance, state) =>
    JSON.stringify(state.storage.sql.exec("SELECT * FROM events").toArray()),
  );

function body(type: string, eventId: string, agreementId: string, extra: Record<string, unknown> = {}) {
  return JSON.stringify({ event: type, event_type: type, event_id: eventId, agreement_id: agreementId, ...extra });
}

async function record(text: string): Promise<string> {
  const response = await postEsign(text);
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

describe("data lifecycle on Workers", () => {
  it("erases a subject's events: tombstones, no trace in the shard, retries still duplicates, an audit event", async () => {
    const marker = `ZZW${crypto.randomUUID().replaceAll("-", "")}`;
    const agreement = `ag-erase-${crypto.randomUUID()}`;
    const subject = `agreements/${agreement}`;
    const bodies = ["agreement.sent", "agreement.signed"].map((type) =>
      body(type, `evt-erase-${crypto.randomUUID()}`, agreement, { participant: { email: `${marker}@example.com` } }),
    );
    const ids = [];
    for (const text of bodies) ids.push(await record(text));
    expect(await storedRows()).toContain(marker);

    const dry = await admin("/events/erase", { method: "POST", body: JSON.stringify({ subject, dryRun: true }) });
    expect(await dry.json()).toEqual({ dryRun: true, events: 2, already_erased: 0, deliveries_cancelled: 0 });
    const erased = await admin("/events/erase", { method: "POST", body: JSON.stringify({ subject }) });
    expect(erased.status).toBe(200);
    const answer = (await erased.json()) as { events: number; audit_event_id: string };
    expect(answer.events).toBe(2);

    for (const id of ids) {
      const event = (await (await admin(`/events/${id}`)).json()) as Record<string, unknown>;
      expect(event.state).toBe("erased");
      expect(JSON.stringify(event)).not.toContain(marker);
    }
    expect(await storedRows()).not.toContain(marker);
    const retried = await postEsign(bodies[0] as string);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toEqual({ id: ids[0], duplicate: true });
    const audit = (await (await admin(`/events/${answer.audit_event_id}`)).json()) as {
      event: Record<string, unknown>;
    };
    expect(audit.event).toMatchObject({ type: "gateway.events.erased", source: "/gateway", data: { events: 2 } });
  });

  it("removes an event past its type's retention rule, and only that one", async () => {
    const viewed = await record(body("agreement.viewed", `evt-ret-${crypto.randomUUID()}`, "ag-ret"));
    const sent = await record(body("agreement.sent", `evt-ret-${crypto.randomUUID()}`, "ag-ret"));
    // Two days pass for both (the rule keeps agreement.viewed 1 day; everything else 30).
    await runInDurableObject(shard(), (_instance, state) => {
      for (const id of [viewed, sent]) {
        state.storage.sql.exec(
          "UPDATE events SET received_at = received_at - ?, record = json_set(record, '$.receivedAt', json_extract(record, '$.receivedAt') - ?) WHERE id = ?",
          2 * DAY,
          2 * DAY,
          id,
        );
      }
    });
    const preview = (await (
      await admin("/events/retention", { method: "POST", body: JSON.stringify({ dryRun: true }) })
    ).json()) as { sample: { id: string; rule: number }[] };
    expect(preview.sample.find((s) => s.id === viewed)).toMatchObject({ rule: 0 });
    expect(preview.sample.some((s) => s.id === sent)).toBe(false);
    const run = await admin("/events/retention", { method: "POST", body: JSON.stringify({ dryRun: false }) });
    expect(run.status).toBe(200);
    expect((await admin(`/events/${viewed}`)).status).toBe(404);
    expect((await admin(`/events/${sent}`)).status).toBe(200);
  });

  it("reports dead letters as one gateway.deliveries.dead event to the operations destination", async () => {
    const eventId = `evt-opdead-${crypto.randomUUID()}`;
    await failHooks(eventId, 4, 500);
    const id = await record(body("agreement.completed", eventId, "ag-op"));
    const alert = await waitFor(async () => {
      const got = (await received("/ops")).map(
        (r: Received) => JSON.parse(r.body) as { type: string; data: { events?: string[] } },
      );
      return got.find((e) => e.type === "gateway.deliveries.dead" && e.data.events?.includes(id));
    });
    expect(alert).toMatchObject({ source: "/gateway", data: { destination: "hooks" } });
  });
});
