/**
 * The live stream on Workers: a WebSocket subscriber on `/ws` (attached to the live hub object)
 * receives recorded events, and after a disconnect resumes by cursor (`?since=`) with the events
 * it missed, read from the Durable Object journal; `/stream` (SSE from the object) resumes the
 * same way. Subscribers authenticate with the test client's API key.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, esignBody, postEsign } from "./gateway-client.ts";

const APP_KEY = "workerd_test_app_key_0123456789";

interface Frame {
  type: string;
  cursor?: string;
  event?: { id: string; data: { event_id: string } };
}

/** A connected subscriber: its frames so far and a wait for the next matching one. */
async function connect(
  query = "",
): Promise<{ next(match: (f: Frame) => boolean): Promise<Frame>; close(): void; socket: WebSocket; texts: string[] }> {
  const response = await exports.default.fetch(`${BASE}/ws${query}`, {
    headers: { upgrade: "websocket", authorization: `Bearer ${APP_KEY}` },
  });
  const socket = (response as Response & { webSocket: WebSocket & { accept(): void } }).webSocket;
  expect(response.status).toBe(101);
  socket.accept();
  const frames: Frame[] = [];
  const texts: string[] = [];
  const waiters: (() => void)[] = [];
  socket.addEventListener("message", (message) => {
    const text = String(message.data);
    texts.push(text);
    frames.push(text.startsWith("{") ? (JSON.parse(text) as Frame) : { type: `text:${text}` });
    for (const wake of waiters.splice(0)) wake();
  });
  let seen = 0;
  return {
    async next(match) {
      for (let turns = 0; turns < 1000; turns++) {
        while (seen < frames.length) {
          const frame = frames[seen++] as Frame;
          if (match(frame)) return frame;
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      throw new Error("no such frame");
    },
    close: () => socket.close(1000, "done"),
    socket,
    texts,
  };
}

const eventOf = (eventId: string) => (f: Frame) => f.type === "event" && f.event?.data.event_id === eventId;

async function record(prefix: string): Promise<string> {
  const { body, eventId } = esignBody(prefix);
  expect((await postEsign(body)).status).toBe(202);
  return eventId;
}

describe("live stream on Workers", () => {
  it("delivers events to a WebSocket subscriber and resumes by cursor after a disconnect", async () => {
    const first = await connect();
    expect((await first.next((f) => f.type === "ready")).type).toBe("ready");
    const a = await record("evt-live-a");
    const frameA = await first.next(eventOf(a));
    first.close();

    const missed = [await record("evt-live-b"), await record("evt-live-c")];
    const second = await connect(`?since=${frameA.cursor}`);
    const frameB = await second.next(eventOf(missed[0] as string));
    const frameC = await second.next(eventOf(missed[1] as string));
    expect(BigInt(frameB.cursor as string)).toBeGreaterThan(BigInt(frameA.cursor as string));
    expect(BigInt(frameC.cursor as string)).toBeGreaterThan(BigInt(frameB.cursor as string));
    second.close();
  });

  it("holds sockets with the hibernation API: tagged by client, keepalive pings answered by the runtime", async () => {
    const live = env.GATEWAY_LIVE.get(env.GATEWAY_LIVE.idFromName("live"));
    const before = await live.openSockets("app");
    const subscriber = await connect();
    await subscriber.next((f) => f.type === "ready");
    expect(await live.openSockets("app")).toBe(before + 1);
    subscriber.socket.send("ping");
    expect((await subscriber.next((f) => f.type === "text:pong")).type).toBe("text:pong");
    const sent = await runInDurableObject(live, (_instance, state) =>
      Promise.all(state.getWebSockets("client:app").map((ws) => state.getWebSocketAutoResponseTimestamp(ws))),
    );
    expect(sent.some((at) => at instanceof Date)).toBe(true);
    // The JSON ping of the protocol still reaches the session (its pong carries the cursor).
    subscriber.socket.send('{"type":"ping"}');
    expect((await subscriber.next((f) => f.type === "pong")).cursor).toMatch(/^\d+$/);
    subscriber.close();
  });

  it("resumes Server-Sent Events by Last-Event-ID", async () => {
    const first = await connect();
    await first.next((f) => f.type === "ready");
    const a = await record("evt-sse-a");
    const frameA = await first.next(eventOf(a));
    first.close();
    const b = await record("evt-sse-b");
    const response = await exports.default.fetch(`${BASE}/stream`, {
      headers: { authorization: `Bearer ${APP_KEY}`, "last-event-id": frameA.cursor as string },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (let reads = 0; reads < 100 && !text.includes(b); reads++) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    expect(text).toContain(b);
    expect(text).not.toContain(a);
  });
});
