/**
 * Resume by cursor under concurrent arrivals, against a real gateway process: webhooks are
 * posted continuously while a WebSocket subscriber (`since=`) and an EventSource subscriber
 * (automatic reconnection with `Last-Event-ID`) drop and reconnect several times. Their
 * concatenated streams must equal the stream of a subscriber that never dropped: no gap, no
 * repeat, same order. Also: cursors the journal cannot serve get an error frame, not silence.
 */
import { EventSource } from "eventsource";
import { afterAll, beforeAll, expect, test } from "vitest";
import {
  FrameLog,
  openReadyWs,
  openWs,
  type StreamGateway,
  startStreamGateway,
  type WsClient,
} from "./stream-fixtures.ts";

let gw: StreamGateway;
beforeAll(async () => {
  gw = await startStreamGateway();
});
afterAll(() => gw?.kill());

const TOTAL = 240;
const POSTERS = 4;

/** Posts `TOTAL` webhooks from `POSTERS` concurrent loops (e-sign and routed staffing events). */
function postContinuously(): { done: Promise<void>; posted: () => number } {
  let next = 0;
  const loop = async () => {
    while (next < TOTAL) {
      const n = next++;
      if (n % 3 === 2) await gw.postStaffing("candidate.accepted");
      else await gw.postEsign(n % 2 ? "agreement.signed" : "agreement.sent");
    }
  };
  return { done: Promise.all(Array.from({ length: POSTERS }, loop)).then(() => {}), posted: () => next };
}

test("WebSocket: reconnecting with since= while events keep arriving loses and repeats nothing", async () => {
  const reference = await openReadyWs(gw.wsUrl({ token: gw.keys.ui }));
  const start = reference.log.frames[0]?.cursor as string;
  const received: { id: string; cursor: string }[] = [];
  const absorb = (client: WsClient, from: number) => {
    for (const f of client.log.frames.slice(from))
      if (f.type === "event") received.push({ id: f.event.id, cursor: f.cursor });
  };

  let client = await openReadyWs(gw.wsUrl({ token: gw.keys.ui, since: start }));
  const posting = postContinuously();
  for (let drop = 1; drop <= 4; drop++) {
    // Drop after this connection saw a few events, stay away while `reference` sees more.
    await client.log.waitFor(() => client.log.eventIds().length >= 5, `events before drop ${drop}`);
    client.ws.terminate();
    absorb(client, 0);
    const seen = reference.log.eventIds().length;
    await reference.log.waitFor(() => reference.log.eventIds().length >= seen + 10, "events while away");
    const cursor = received[received.length - 1]?.cursor ?? start;
    client = await openReadyWs(gw.wsUrl({ token: gw.keys.ui, since: cursor }));
    expect(client.log.frames[0]?.cursor).toBe(cursor);
  }
  await posting.done;
  await reference.log.waitForEvents(TOTAL, 30_000);
  const last = reference.log.eventIds()[TOTAL - 1];
  await client.log.waitFor((f) => f.event?.id === last, "the last event after the final reconnect", 30_000);
  absorb(client, 1);

  expect(reference.log.eventIds()).toHaveLength(TOTAL);
  expect(received.map((r) => r.id)).toEqual(reference.log.eventIds());
  const cursors = received.map((r) => Number(r.cursor));
  expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
  reference.ws.terminate();
  client.ws.terminate();
});

test("SSE: an EventSource that loses its connection resumes with Last-Event-ID, no gap, no repeat", async () => {
  const reference = await openReadyWs(gw.wsUrl({ token: gw.keys.ui }));
  const log = new FrameLog();
  const lastEventIds: (string | null)[] = [];
  let drop: (() => void) | undefined;
  const es = new EventSource(`${gw.url}/stream?token=${gw.keys.ui}`, {
    // Wraps each response body so the test can break the connection the way a network does
    // (an error that is not an abort, which EventSource answers by reconnecting).
    fetch: async (input, init) => {
      lastEventIds.push(new Headers(init?.headers).get("last-event-id"));
      const response = await fetch(input, init);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({
        start: (c) => {
          controller = c;
        },
        pull: async (c) => {
          const { done, value } = await reader.read();
          if (done) c.close();
          else c.enqueue(value);
        },
      });
      drop = () => {
        controller.error(new TypeError("connection dropped"));
        reader.cancel().catch(() => {});
      };
      return new Response(body, { status: response.status, headers: response.headers });
    },
  });
  es.onmessage = (message) => log.push({ ...JSON.parse(message.data), lastEventId: message.lastEventId });
  await log.waitFor((f) => f.type === "ready", "ready");

  const posting = postContinuously();
  for (let round = 1; round <= 2; round++) {
    await log.waitFor(() => log.eventIds().length >= round * 20, `events before drop ${round}`);
    drop?.();
    await log.waitFor(() => log.frames.filter((f) => f.type === "ready").length > round, `reconnect ${round}`);
  }
  await posting.done;
  await reference.log.waitForEvents(TOTAL, 30_000);
  const last = reference.log.eventIds()[TOTAL - 1];
  await log.waitFor((f) => f.event?.id === last, "the last event over SSE", 30_000);
  es.close();

  expect(log.eventIds()).toEqual(reference.log.eventIds());
  // The reconnections carried the cursor of the last event received.
  expect(lastEventIds[0]).toBeNull();
  expect(lastEventIds.slice(1, 3).every((id) => id !== null && /^\d+$/.test(id))).toBe(true);
  for (const f of log.frames.filter((f) => f.type === "event")) expect(f.lastEventId).toBe(f.cursor);
  reference.ws.terminate();
});

test("a cursor beyond the journal gets an error frame and close code 4010", async () => {
  const refused = openWs(gw.wsUrl({ token: gw.keys.ui, since: "999999999" }));
  expect(await refused.closed).toEqual({ code: 4010, reason: "cursor_ahead" });
  expect(refused.log.frames).toEqual([
    expect.objectContaining({ type: "error", code: "cursor_ahead", fatal: true, details: expect.any(Object) }),
  ]);
});
