/**
 * Live event frames reach WebSocket subscribers as text frames with the exact JSON of the event,
 * when the Node adapter sends each event's frame as bytes encoded once for all subscribers
 * (adapters/node/node-websocket-text.ts). A binary frame would reach a browser as a Blob, and
 * bytes shared between subscribers must not mix two events' frames.
 */

import { afterAll, beforeAll, expect, test } from "vitest";
import type WebSocket from "ws";
import { openReadyWs, type StreamGateway, startStreamGateway, syncClients, type WsClient } from "./stream-fixtures.ts";

let gw: StreamGateway;
const clients: WsClient[] = [];

beforeAll(async () => {
  gw = await startStreamGateway();
});
afterAll(async () => {
  for (const client of clients) client.ws.terminate();
  await gw?.kill();
});

test("every subscriber gets each event as its own text frame with that event's JSON", async () => {
  const opened = await Promise.all(
    [0, 1, 2].map(() => openReadyWs(gw.wsUrl(), { authorization: `Bearer ${gw.keys.ui}` })),
  );
  clients.push(...opened);
  const kinds: boolean[][] = opened.map(() => []);
  const texts: string[][] = opened.map(() => []);
  opened.forEach((client, i) => {
    client.ws.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
      kinds[i]?.push(isBinary);
      texts[i]?.push(data.toString());
    });
  });

  const ids = [await gw.postEsign("agreement.signed"), await gw.postEsign("agreement.sent")];
  await Promise.all(opened.map((client) => client.log.waitFor((f) => f.event?.id === ids[1], `event ${ids[1]}`)));

  for (let i = 0; i < opened.length; i++) {
    expect(kinds[i]?.every((binary) => binary === false)).toBe(true);
    const events = (texts[i] ?? []).map((text) => JSON.parse(text)).filter((frame) => frame.type === "event");
    expect(events.map((frame) => frame.event.id)).toEqual(ids);
  }
  // The same bytes went to every subscriber.
  expect(texts[1]).toEqual(texts[0]);
  expect(texts[2]).toEqual(texts[0]);
});

// The Node adapter writes each event's whole frame itself: the three length encodings of RFC 6455
// (7-bit, 16-bit and 64-bit payload length) must all reach a `ws` client as valid text frames.
test("frames of every payload-length encoding arrive whole and intact", async () => {
  const client = await openReadyWs(gw.wsUrl(), { authorization: `Bearer ${gw.keys.ui}` });
  clients.push(client);
  const texts: string[] = [];
  client.ws.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
    if (!isBinary) texts.push(data.toString());
  });
  const paddings = [0, 2_000, 70_000];
  const ids: string[] = [];
  for (const size of paddings) {
    ids.push(
      await gw.postEsign("agreement.signed", {
        edit: (body) => {
          (body as { data: Record<string, unknown> }).data.note = "x".repeat(size);
        },
      }),
    );
  }
  const last = ids.at(-1);
  await client.log.waitFor((f) => f.event?.id === last, `event ${last}`);
  const events = texts.map((text) => JSON.parse(text)).filter((frame) => frame.type === "event");
  expect(events.map((frame) => frame.event.id)).toEqual(ids);
  const lengths = texts.filter((text) => text.includes('"type":"event"')).map((text) => Buffer.byteLength(text));
  expect(lengths[1]).toBeGreaterThan(125);
  expect(lengths[1]).toBeLessThanOrEqual(0xffff);
  expect(lengths[2]).toBeGreaterThan(0xffff);
});

// Heartbeats go out like event frames (one frame per heartbeat turn, its bytes built once for all
// subscribers): each subscriber must get them as text frames, in order after the events they
// follow, carrying the cursor of the last event sent, from which a reconnection resumes with
// nothing repeated.
test("heartbeats arrive as text frames after the events they follow, with a cursor to resume from", async () => {
  const quick = await startStreamGateway({ stream: { GATEWAY_STREAM_HEARTBEAT_MS: "50" } });
  const opened: WsClient[] = [];
  try {
    opened.push(
      ...(await Promise.all(
        [0, 1].map(() => openReadyWs(quick.wsUrl(), { authorization: `Bearer ${quick.keys.ui}` })),
      )),
    );
    const raw: { binary: boolean; text: string }[][] = opened.map(() => []);
    opened.forEach((client, i) => {
      client.ws.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
        raw[i]?.push({ binary: isBinary, text: data.toString() });
      });
    });
    const id = await quick.postEsign("agreement.signed");
    const seen = await Promise.all(
      opened.map(async (client) => {
        const event = await client.log.waitFor((f) => f.event?.id === id, `event ${id}`);
        const at = client.log.frames.indexOf(event);
        await client.log.waitFor(
          () => client.log.frames.slice(at).filter((f) => f.type === "heartbeat").length >= 2,
          "two heartbeats after the event",
          15_000,
        );
        return { event, after: client.log.frames.slice(at + 1), before: client.log.frames.slice(0, at) };
      }),
    );
    for (let i = 0; i < opened.length; i++) {
      const { event, after, before } = seen[i] as (typeof seen)[number];
      expect(raw[i]?.every((frame) => frame.binary === false)).toBe(true);
      const heartbeats = after.filter((f) => f.type === "heartbeat");
      for (const beat of heartbeats) {
        expect(beat.cursor).toBe(event.cursor);
        expect(new Date(beat.time).toISOString()).toBe(beat.time);
      }
      for (const beat of before.filter((f) => f.type === "heartbeat")) {
        expect(BigInt(beat.cursor)).toBeLessThan(BigInt(event.cursor));
      }
      // Every heartbeat's text is its JSON exactly: nothing of another frame's bytes mixed in.
      for (const frame of raw[i] ?? []) expect(JSON.stringify(JSON.parse(frame.text))).toBe(frame.text);
    }
    // Resuming from a heartbeat's cursor repeats nothing and misses the next event.
    const cursor = String(seen[0]?.after.find((f) => f.type === "heartbeat")?.cursor);
    const resumed = await openReadyWs(quick.wsUrl({ since: cursor }), { authorization: `Bearer ${quick.keys.ui}` });
    opened.push(resumed);
    const next = await quick.postEsign("agreement.sent");
    await resumed.log.waitFor((f) => f.event?.id === next, `event ${next}`);
    expect(resumed.log.eventIds()).toEqual([next]);
  } finally {
    for (const client of opened) client.ws.terminate();
    await quick.kill();
  }
});

// A burst of concurrent webhooks is answered in groups (one store commit, one event-loop turn),
// so one fan-out turn carries several events: each subscriber gets that turn's frames in one
// write (adapters/node/node-websocket-text.ts joins them once per audience). Subscribers of two
// audiences (everything; e-sign agreements only) must each get exactly their events, each as its
// own text frame with its exact JSON, in event-log order, and subscribers of one audience the
// same bytes.
test("a burst of concurrent events reaches subscribers of each audience whole, in order, frame by frame", async () => {
  const everything = await Promise.all(
    [0, 1, 2].map(() => openReadyWs(gw.wsUrl(), { authorization: `Bearer ${gw.keys.ui}` })),
  );
  const agreements = await openReadyWs(gw.wsUrl(), { authorization: `Bearer ${gw.keys.agreements}` });
  const opened = [...everything, agreements];
  clients.push(...opened);
  const texts: string[][] = opened.map(() => []);
  opened.forEach((client, i) => {
    client.ws.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
      expect(isBinary).toBe(false);
      texts[i]?.push(data.toString());
    });
  });

  const esign: Promise<string>[] = [];
  const staffing: Promise<string>[] = [];
  for (let i = 0; i < 40; i++) {
    if (i % 3 === 2) staffing.push(gw.postStaffing("candidate.accepted"));
    else esign.push(gw.postEsign(i % 2 === 0 ? "agreement.signed" : "agreement.sent"));
  }
  const esignIds = await Promise.all(esign);
  const staffingIds = await Promise.all(staffing);
  const all = new Set([...esignIds, ...staffingIds]);
  await Promise.all(everything.map((client) => client.log.waitForEvents(all.size)));
  await agreements.log.waitForEvents(esignIds.length);
  await syncClients(...opened);

  const eventsOf = (i: number) =>
    (texts[i] ?? []).map((text) => JSON.parse(text)).filter((frame) => frame.type === "event");
  for (let i = 0; i < opened.length; i++) {
    // Each frame is exactly one JSON document: no bytes of a neighbour in the batch mixed in.
    for (const text of texts[i] ?? []) expect(JSON.stringify(JSON.parse(text))).toBe(text);
    const cursors = eventsOf(i).map((frame) => BigInt(frame.cursor));
    for (let k = 1; k < cursors.length; k++) expect(cursors[k]).toBeGreaterThan(cursors[k - 1] as bigint);
  }
  for (let i = 0; i < everything.length; i++) {
    expect(new Set(eventsOf(i).map((frame) => frame.event.id))).toEqual(all);
    expect(eventsOf(i)).toHaveLength(all.size);
  }
  expect(new Set(eventsOf(3).map((frame) => frame.event.id))).toEqual(new Set(esignIds));
  expect(eventsOf(3)).toHaveLength(esignIds.length);
  const eventTexts = (i: number) => (texts[i] ?? []).filter((text) => text.startsWith('{"type":"event"'));
  expect(eventTexts(1)).toEqual(eventTexts(0));
  expect(eventTexts(2)).toEqual(eventTexts(0));
});
