/**
 * `/ws` against a real gateway process: routing decides what reaches the stream, connect-time
 * filters and destinations, subscribe/unsubscribe messages, scope enforcement and auth refusals
 * (error frame, then a documented close code, before any event).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  openReadyWs,
  openWs,
  type StreamGateway,
  sendMessage,
  startStreamGateway,
  syncClients,
  type WsClient,
} from "./stream-fixtures.ts";

let gw: StreamGateway;
const clients: WsClient[] = [];
const track = (client: WsClient) => {
  clients.push(client);
  return client;
};

beforeAll(async () => {
  gw = await startStreamGateway();
});
afterAll(async () => {
  for (const client of clients) client.ws.terminate();
  await gw?.kill();
});

/**
 * Posts a marker event that the `watchers` get and waits for it there, then syncs every
 * connection of the test: afterwards each has received all it will of the events before.
 */
async function barrier(...watchers: WsClient[]) {
  const id = await gw.postEsign("agreement.sent");
  await Promise.all(watchers.map((c) => c.log.waitFor((f) => f.event?.id === id, `barrier ${id}`)));
  await syncClients(...clients.filter((c) => c.ws.readyState === c.ws.OPEN));
  return id;
}

describe("delivery", () => {
  test("an unfiltered subscriber gets every event routed to a stream destination, in journal order", async () => {
    const all = track(await openReadyWs(gw.wsUrl(), { authorization: `Bearer ${gw.keys.ui}` }));
    const ready = all.log.frames[0];
    expect(ready).toMatchObject({ type: "ready", subscriptions: { default: {} }, expiresAt: null });
    expect(ready?.cursor).toMatch(/^\d+$/);

    const signed = await gw.postEsign("agreement.signed");
    const accepted = await gw.postStaffing("candidate.accepted");
    // Routed nowhere: staffing events other than candidate.* reach no stream destination.
    const unrouted = await gw.postStaffing("staffing.completed");
    const marker = await barrier(all);

    const ids = all.log.eventIds();
    expect(ids).toEqual([signed, accepted, marker]);
    expect(ids).not.toContain(unrouted);
    const frames = all.log.frames.filter((f) => f.type === "event");
    expect(frames[0]?.event).toMatchObject({
      specversion: "1.0",
      id: signed,
      type: "agreement.signed",
      source: "/webhooks/esign",
    });
    const cursors = frames.map((f) => Number(f.cursor));
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(new Set(cursors).size).toBe(cursors.length);
  });

  test("connect-time filters: type patterns, repeatable sources, subjects", async () => {
    const all = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui })));
    const agreements = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui, type: "agreement.*" })));
    const twoTypes = track(
      await openReadyWs(gw.wsUrl({ token: gw.keys.ui, type: ["agreement.declined", "candidate.accepted"] })),
    );
    const staffing = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui, source: "staffing" })));
    const subject = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui, subject: "agreements/subject-42" })));

    const declined = await gw.postEsign("agreement.declined");
    const other = await gw.postEsign("agreement.signed", { subjectId: "subject-42" });
    const candidate = await gw.postStaffing("candidate.accepted");
    const marker = await barrier(all, agreements);

    expect(all.log.eventIds().slice(-4)).toEqual([declined, other, candidate, marker]);
    expect(agreements.log.eventIds()).toEqual([declined, other, marker]);
    expect(twoTypes.log.eventIds()).toEqual([declined, candidate]);
    expect(staffing.log.eventIds()).toEqual([candidate]);
    expect(subject.log.eventIds()).toEqual([other]);
  });

  test("?destination= picks one stream destination; the default is any of them", async () => {
    const audit = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui, destination: "audit" })));
    const anyStream = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui })));
    // Only agreement.completed is routed to `audit`; every e-sign event is routed to `live`.
    const completed = await gw.postEsign("agreement.completed");
    const sent = await barrier(anyStream);
    expect(audit.log.eventIds()).toEqual([completed]);
    expect(anyStream.log.eventIds()).toEqual([completed, sent]);
  });
});

describe("subscribe and unsubscribe messages", () => {
  test("subscriptions are added, replaced and removed while connected", async () => {
    const client = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui, type: "agreement.declined" })));
    const watcher = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui })));

    sendMessage(client, { type: "subscribe", id: "staffing", filter: { source: "staffing" } });
    await client.log.waitFor((f) => f.type === "subscribed" && f.id === "staffing", "subscribed");
    const candidate = await gw.postStaffing("candidate.accepted");
    const signed = await gw.postEsign("agreement.signed");
    await barrier(watcher);

    sendMessage(client, { type: "unsubscribe", id: "staffing" });
    await client.log.waitFor((f) => f.type === "unsubscribed" && f.id === "staffing", "unsubscribed");
    sendMessage(client, { type: "subscribe", filter: { type: ["agreement.signed"] } });
    await client.log.waitFor((f) => f.type === "subscribed" && f.id === "default", "default replaced");
    await gw.postStaffing("candidate.accepted");
    const signed2 = await gw.postEsign("agreement.signed");
    await gw.postEsign("agreement.declined");
    await barrier(watcher);

    expect(client.log.eventIds()).toEqual([candidate, signed2]);
    expect(client.log.eventIds()).not.toContain(signed);
  });

  // Subscribers with the same destinations, scope and filters share one filter evaluation per
  // event (src/stream/live-stream.ts): one of them changing its subscription must leave the group.
  test("of two subscribers with the same filter, the one that changes it alone gets the new selection", async () => {
    const stays = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui, type: "agreement.declined" })));
    const moves = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui, type: "agreement.declined" })));
    const watcher = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui })));
    const declined = await gw.postEsign("agreement.declined");
    await barrier(watcher);

    sendMessage(moves, { type: "subscribe", filter: { type: ["agreement.signed"] } });
    await moves.log.waitFor((f) => f.type === "subscribed" && f.id === "default", "default replaced");
    const signed = await gw.postEsign("agreement.signed");
    const declined2 = await gw.postEsign("agreement.declined");
    await barrier(watcher);

    expect(stays.log.eventIds()).toEqual([declined, declined2]);
    expect(moves.log.eventIds()).toEqual([declined, signed]);
  });

  test("an invalid message answers a non-fatal error frame and the connection stays usable", async () => {
    const client = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui })));
    client.ws.send("not json");
    sendMessage(client, { type: "subscribe", filter: { colour: ["red"] } });
    await client.log.waitFor((f) => f.type === "error", "error frame");
    const errors = () => client.log.frames.filter((f) => f.type === "error");
    await client.log.waitFor(() => errors().length === 2, "two error frames");
    for (const error of errors()) expect(error).toMatchObject({ code: "invalid_request", fatal: false });
    sendMessage(client, { type: "ping" });
    await client.log.waitFor((f) => f.type === "pong", "pong after errors");
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });

  test("a subscription outside the scope is refused and delivers nothing", async () => {
    const client = track(await openReadyWs(gw.wsUrl({ token: gw.keys.agreements })));
    sendMessage(client, { type: "subscribe", id: "candidates", filter: { source: "staffing" } });
    const error = await client.log.waitFor((f) => f.type === "error", "forbidden frame");
    expect(error).toMatchObject({ code: "forbidden", fatal: false, details: { id: "candidates" } });
    const watcher = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui })));
    await gw.postStaffing("candidate.accepted");
    const marker = await barrier(watcher, client);
    expect(client.log.eventIds()).toEqual([marker]);
  });
});

describe("who may see what", () => {
  async function expectRefused(url: string, headers: Record<string, string>, code: number, reason: string) {
    const client = track(openWs(url, headers));
    const closed = await client.closed;
    expect(closed).toEqual({ code, reason });
    expect(client.log.frames).toHaveLength(1);
    expect(client.log.frames[0]).toMatchObject({ type: "error", code: reason, fatal: true });
    return client.log.frames[0];
  }

  test("missing, unknown and malformed credentials close with 4001 before any event", async () => {
    await expectRefused(gw.wsUrl(), {}, 4001, "unauthorized");
    await expectRefused(gw.wsUrl({ token: "not-a-key" }), {}, 4001, "unauthorized");
    await expectRefused(gw.wsUrl(), { authorization: "Bearer a.b.c" }, 4001, "unauthorized");
    const forged = await gw.signToken("ui", 60);
    await expectRefused(gw.wsUrl({ token: `${forged.slice(0, -4)}AAAA` }), {}, 4001, "unauthorized");
  });

  test("an expired token closes with 4001 token_expired", async () => {
    const expired = await gw.signToken("ui", -10);
    await expectRefused(gw.wsUrl({ token: expired }), {}, 4001, "token_expired");
  });

  test("a client without stream scope, or a filter outside its scope, closes with 4003", async () => {
    await expectRefused(gw.wsUrl({ token: gw.keys.noStream }), {}, 4003, "forbidden");
    const frame = await expectRefused(
      gw.wsUrl({ token: gw.keys.agreements, type: "candidate.*" }),
      {},
      4003,
      "forbidden",
    );
    expect(frame?.details.outsideScope).toEqual([{ dimension: "type", pattern: "candidate.*" }]);
    await expectRefused(gw.wsUrl({ token: gw.keys.agreements, type: "*" }), {}, 4003, "forbidden");
  });

  test("unknown parameters, bad cursors and unknown destinations are refused", async () => {
    await expectRefused(gw.wsUrl({ token: gw.keys.ui, types: "agreement.*" }), {}, 4000, "invalid_request");
    await expectRefused(gw.wsUrl({ token: gw.keys.ui, since: "abc" }), {}, 4000, "invalid_request");
    await expectRefused(gw.wsUrl({ token: gw.keys.ui, destination: "nowhere" }), {}, 4004, "not_found");
  });

  test("a scoped client sees only its scope, and a token claim narrows it further", async () => {
    const scoped = track(await openReadyWs(gw.wsUrl({ token: gw.keys.agreements })));
    const narrowed = track(
      await openReadyWs(
        gw.wsUrl({ token: await gw.signToken("agreements", 300, { stream: { types: ["agreement.declined"] } }) }),
      ),
    );
    // A claim cannot widen: `staffing` is outside the client's configured scope, so nothing of it shows.
    const widened = track(
      await openReadyWs(
        gw.wsUrl({ token: await gw.signToken("agreements", 300, { stream: { sources: ["staffing"] } }) }),
      ),
    );
    const watcher = track(await openReadyWs(gw.wsUrl({ token: gw.keys.ui })));
    const declined = await gw.postEsign("agreement.declined");
    await gw.postStaffing("candidate.accepted");
    const marker = await barrier(watcher, scoped);
    expect(scoped.log.eventIds()).toEqual([declined, marker]);
    expect(narrowed.log.eventIds()).toEqual([declined]);
    expect(widened.log.eventIds()).toEqual([]);
    expect(narrowed.log.frames[0]?.expiresAt).toMatch(/^\d{4}-/);
  });

  test("a plain GET /ws answers 426 in the error envelope", async () => {
    const response = await fetch(`${gw.url}/ws`);
    expect(response.status).toBe(426);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_request" } });
  });
});
