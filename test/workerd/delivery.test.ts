/**
 * Fan-out on Workers, end to end inside workerd: a signed e-sign webhook is recorded by the
 * Worker, the delivery object routes it (woken after the append), and its engine delivers to a
 * real HTTP receiver on loopback (Standard Webhooks signed) and to a Cloudflare Queue (consumed
 * by a test Worker that forwards each message to the receiver). Failures are retried on the
 * destination's schedule (50 ms here), exhausted retries dead-letter, and the admin API replays.
 */
import { describe, expect, it } from "vitest";
import { admin, esignBody, failHooks, postEsign, type Received, received, waitFor } from "./gateway-client.ts";

/** The one delivery of an upstream event that reached `path`, once it did. */
const arrived = (path: string, eventId: string) => async () =>
  (await received(path)).filter((r: Received) => r.body.includes(eventId));

async function recordEsign(prefix: string): Promise<{ id: string; eventId: string }> {
  const { body, eventId } = esignBody(prefix);
  const response = await postEsign(body);
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as { id: string };
  return { id, eventId };
}

describe("delivery on Workers", () => {
  it("delivers a recorded event to the http destination, signed, and to the Cloudflare Queue", async () => {
    const { id, eventId } = await recordEsign("evt-fan");
    const hooks = await waitFor(async () => {
      const got = await arrived("/hook", eventId)();
      return got.length > 0 ? got : undefined;
    });
    expect(hooks).toHaveLength(1);
    const hook = hooks[0] as Received;
    expect(hook.headers["webhook-id"]).toBe(id);
    expect(hook.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(JSON.parse(hook.body)).toMatchObject({ id, type: "agreement.completed", data: { event_id: eventId } });

    const messages = await waitFor(async () => {
      const got = await arrived("/queue", eventId)();
      return got.length > 0 ? got : undefined;
    });
    const message = JSON.parse((messages[0] as Received).body) as Record<string, string>;
    expect(message).toMatchObject({ id, type: "agreement.completed", source: "/webhooks/esign" });
    expect(JSON.parse(message.payload as string)).toMatchObject({ id, data: { event_id: eventId } });
  });

  it("retries after failures and delivers once the destination recovers", async () => {
    const pending = esignBody("evt-recover");
    await failHooks(pending.eventId, 2);
    const response = await postEsign(pending.body);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await waitFor(async () => ((await arrived("/hook", pending.eventId)()).length > 0 ? true : undefined));
    expect(await arrived("/hook-failed", pending.eventId)()).toHaveLength(2);
    const page = (await (await admin(`/destinations/hooks/deliveries?state=delivered&limit=100`)).json()) as {
      deliveries: { event_id: string; failures: number; attempts: { ok: boolean; status: number | null }[] }[];
    };
    const record = page.deliveries.find((d) => d.event_id === id);
    expect(record?.attempts.map((a) => [a.ok, a.status])).toEqual([
      [false, 503],
      [false, 503],
      [true, 200],
    ]);
  });

  it("dead-letters after the schedule is exhausted, and replays the dead letter on request", async () => {
    const { body, eventId } = esignBody("evt-dead");
    await failHooks(eventId, 4, 500);
    const response = await postEsign(body);
    const { id } = (await response.json()) as { id: string };
    const dead = await waitFor(async () => {
      const page = (await (await admin("/destinations/hooks/deliveries?state=dead&limit=100")).json()) as {
        deliveries: { event_id: string; attempts: unknown[] }[];
      };
      return page.deliveries.find((d) => d.event_id === id);
    });
    expect(dead.attempts).toHaveLength(4);
    expect(await arrived("/hook", eventId)()).toHaveLength(0);

    const replay = await admin(`/events/${id}/replay`, {
      method: "POST",
      body: JSON.stringify({ destination: "hooks" }),
    });
    expect(replay.status).toBe(202);
    await waitFor(async () => ((await arrived("/hook", eventId)()).length > 0 ? true : undefined));
    const health = (await (await admin("/destinations")).json()) as { destinations: { id: string; type: string }[] };
    // The `t-*` destinations belong to test/workerd/transform-in-workerd.test.ts, the `ns-*` ones
    // to test/workerd/transform-no-stall-in-workerd.test.ts.
    const own = health.destinations.filter((d) => !d.id.startsWith("t-") && !d.id.startsWith("ns-"));
    expect(own.map((d) => [d.id, d.type])).toEqual([
      ["hooks", "http"],
      ["slow-hooks", "http"],
      ["matrix-cloudevents", "http"],
      ["matrix-relay", "http"],
      ["ops", "http"],
      ["events-queue", "queue"],
    ]);
  });

  it("pauses and resumes a destination through the admin API, keeping its events", async () => {
    expect((await admin("/destinations/hooks/pause", { method: "POST" })).status).toBe(200);
    const { eventId } = await recordEsign("evt-paused");
    // The queue destination is not paused: once it has the event, routing is done.
    await waitFor(async () => ((await arrived("/queue", eventId)()).length > 0 ? true : undefined));
    expect(await arrived("/hook", eventId)()).toHaveLength(0);
    expect((await admin("/destinations/hooks/resume", { method: "POST" })).status).toBe(200);
    await waitFor(async () => ((await arrived("/hook", eventId)()).length > 0 ? true : undefined));
  });

  it("refuses the delivery admin API without the admin key", async () => {
    const response = await admin("/destinations", { headers: { authorization: "Bearer wrong" } });
    expect(response.status).toBe(401);
  });
});
