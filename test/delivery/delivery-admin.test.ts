/**
 * The delivery admin API on the real app: destination health, deliveries of a destination and
 * of an event, pause/resume, replay of one event and bulk replay by state and time range,
 * routes that select destinations, and the guard rails (admin key, validation, 404s).
 */
import { afterEach, describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import { type InProcessGateway, startInProcessGateway } from "./helpers/in-process-gateway.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

async function twoDestinations(
  options: { failingA?: () => boolean; routes?: Parameters<typeof startInProcessGateway>[0]["routes"] } = {},
): Promise<{ gw: InProcessGateway; a: WebhookReceiver; b: WebhookReceiver }> {
  const a = await startWebhookReceiver(() => ({ status: options.failingA?.() ? 500 : 200 }));
  const b = await startWebhookReceiver();
  const gw = await startInProcessGateway({
    destinations: [
      { id: "a", url: a.url, retry: { schedule: [1], jitter: 0 } },
      { id: "b", url: b.url },
    ],
    routes: options.routes,
  });
  open.push(gw, a, b);
  return { gw, a, b };
}

describe("delivery admin API", () => {
  it("needs the admin key and validates its input", async () => {
    const { gw } = await twoDestinations();
    const anonymous = await gw.gateway.fetch(new Request("http://gateway.test/destinations"));
    expect(anonymous.status).toBe(401);
    const replay = await gw.gateway.fetch(new Request("http://gateway.test/destinations/a/replay", { method: "POST" }));
    expect(replay.status).toBe(401);
    expect((await gw.admin("POST", "/destinations/nope/pause")).body.error.code).toBe("not_found");
    expect((await gw.admin("GET", "/destinations/a/deliveries?state=bogus")).body.error.code).toBe("invalid_request");
    expect((await gw.admin("POST", "/destinations/a/replay", { states: ["pending"] })).status).toBe(400);
    expect((await gw.admin("POST", "/events/evt_00000000000000000000000000000000/replay")).status).toBe(404);
  });

  it("pause keeps events; resume delivers them", async () => {
    const { gw, a, b } = await twoDestinations();
    const paused = await gw.admin("POST", "/destinations/a/pause");
    expect(paused.body.destination).toMatchObject({ id: "a", state: "paused" });
    const id = await gw.post();
    expect(a.requests).toHaveLength(0);
    expect(b.ids()).toEqual([id]);
    const { body } = await gw.admin("GET", "/destinations");
    expect(
      body.destinations.map((d: { id: string; state: string; backlog: number }) => [d.id, d.state, d.backlog]),
    ).toEqual([
      ["a", "paused", 1],
      ["b", "active", 0],
    ]);
    expect((await gw.admin("GET", "/destinations/a/deliveries")).body.deliveries[0]).toMatchObject({
      event_id: id,
      state: "paused",
    });
    await gw.time.advance(3600_000);
    expect(a.requests).toHaveLength(0);
    await gw.admin("POST", "/destinations/a/resume");
    await gw.engine.settled();
    expect(a.ids()).toEqual([id]);
  });

  it("a pause is kept in the outbox and survives a restart of the engine", async () => {
    const outbox = memoryOutbox();
    const a = await startWebhookReceiver();
    open.push(a);
    const first = await startInProcessGateway({ destinations: [{ id: "a", url: a.url }], outbox });
    await first.admin("POST", "/destinations/a/pause");
    await first.close();
    const second = await startInProcessGateway({ destinations: [{ id: "a", url: a.url }], outbox });
    open.push(second);
    expect((await second.admin("GET", "/destinations")).body.destinations[0].state).toBe("paused");
    await second.post();
    expect(a.requests).toHaveLength(0);
    await second.admin("POST", "/destinations/a/resume");
    await second.engine.settled();
    expect(a.requests).toHaveLength(1);
  });

  it("replays one event to all its destinations or to one, with the same webhook-id", async () => {
    const { gw, a, b } = await twoDestinations();
    const id = await gw.post();
    const all = await gw.admin("POST", `/events/${id}/replay`);
    expect(all.status).toBe(202);
    expect(all.body.deliveries.map((d: { destination: string }) => d.destination)).toEqual(["a", "b"]);
    await gw.engine.settled();
    expect([a.ids(), b.ids()]).toEqual([
      [id, id],
      [id, id],
    ]);
    const one = await gw.admin("POST", `/events/${id}/replay`, { destination: "b" });
    expect(one.status).toBe(202);
    await gw.engine.settled();
    expect([a.requests.length, b.requests.length]).toEqual([2, 3]);
    const { body } = await gw.admin("GET", `/events/${id}`);
    expect(body.deliveries.map((d: { attempts: unknown[] }) => d.attempts.length)).toEqual([2, 3]);
  });

  it("bulk-replays dead letters, all of them or those received in a time range", async () => {
    let failing = true;
    const { gw, a } = await twoDestinations({ failingA: () => failing });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await gw.post());
      await gw.time.advance(3600_000);
    }
    const dead = await gw.admin("GET", "/destinations/a/deliveries?state=dead");
    expect(dead.body.deliveries.map((d: { event_id: string }) => d.event_id)).toEqual([...ids].reverse());
    expect(a.requests).toHaveLength(6);
    failing = false;

    const t0 = gw.time.clock.now() - 3 * 3600_000;
    const ranged = await gw.admin("POST", "/destinations/a/replay", {
      states: ["dead"],
      from: new Date(t0 + 1800_000).toISOString(),
      to: t0 + 5400_000,
    });
    expect(ranged.body).toEqual({ destination: "a", replayed: 1 });
    await gw.engine.settled();
    expect(a.ids().slice(6)).toEqual([ids[1]]);

    const rest = await gw.admin("POST", "/destinations/a/replay", {});
    expect(rest.body.replayed).toBe(2);
    await gw.engine.settled();
    expect(a.ids().slice(7).sort()).toEqual([ids[0], ids[2]].sort());
    const states = await gw.admin("GET", "/destinations/a/deliveries?state=delivered&limit=2");
    expect(states.body.deliveries).toHaveLength(2);
    expect(states.body.next_cursor).not.toBeNull();
    const next = await gw.admin("GET", `/destinations/a/deliveries?state=delivered&cursor=${states.body.next_cursor}`);
    expect(next.body.deliveries).toHaveLength(1);
  });

  it("routes decide the destinations; an unrouted event is recorded with no deliveries", async () => {
    const { gw, a, b } = await twoDestinations({
      routes: [
        { types: ["agreement.completed"], destinations: ["a"] },
        { types: ["agreement.*"], where: { "data.status": "declined" }, destinations: ["b"] },
      ],
    });
    const completed = await gw.post("agreement.completed");
    const declined = await gw.post("agreement.declined");
    const sent = await gw.post("agreement.sent");
    expect(a.ids()).toEqual([completed]);
    expect(b.ids()).toEqual([declined]);
    const unrouted = await gw.admin("GET", `/events/${sent}`);
    expect(unrouted.status).toBe(200);
    expect(unrouted.body.deliveries).toEqual([]);
    // Replay of an event to a destination its routes do not name is allowed explicitly.
    await gw.admin("POST", `/events/${sent}/replay`, { destination: "b" });
    await gw.engine.settled();
    expect(b.ids()).toEqual([declined, sent]);
  });
});
