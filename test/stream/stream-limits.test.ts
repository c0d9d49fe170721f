/**
 * Limits of the live stream against a real gateway process with short timings (set through
 * `GATEWAY_STREAM_*`): a consumer that stops reading is disconnected with 4008 once its buffer
 * passes the bound (WebSocket and SSE) and can resume by cursor; a token that expires while
 * connected closes with 4001; heartbeats flow; a peer that never answers pings is dropped; a
 * shutdown closes subscribers with 1001.
 */
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openReadyWs, type StreamGateway, startStreamGateway } from "./stream-fixtures.ts";

const BOUND = 256 * 1024;
const PADDING = "x".repeat(300 * 1024);
const MAX_POSTS = 200;

let gw: StreamGateway;
beforeAll(async () => {
  gw = await startStreamGateway({
    stream: {
      GATEWAY_STREAM_MAX_BUFFERED_BYTES: String(BOUND),
    },
    edit(config) {
      config.log = { level: "info" };
      for (const source of config.sources) source.bodyLimitBytes = 1024 * 1024;
    },
  });
});
afterAll(() => gw?.kill());

const bigEvent = () => gw.postEsign("agreement.signed", { edit: (body) => Object.assign(body, { padding: PADDING }) });

/** Posts large events until the gateway logs that it dropped a slow consumer; returns the ids. */
async function postUntilSlowConsumerDropped(): Promise<string[]> {
  const ids: string[] = [];
  const dropped = () =>
    gw.lines.filter((l) => l.includes("stream subscriber disconnected") && l.includes("slow_consumer"));
  const before = dropped().length;
  while (dropped().length === before) {
    if (ids.length >= MAX_POSTS) throw new Error(`no slow-consumer disconnect after ${MAX_POSTS} large events`);
    ids.push(await bigEvent());
  }
  return ids;
}

describe("slow consumers", () => {
  test("WebSocket: a subscriber that stops reading is closed with 4008 and resumes by cursor", async () => {
    const client = await openReadyWs(gw.wsUrl({ token: gw.keys.ui }));
    const socket = (client.ws as unknown as { _socket: net.Socket })._socket;
    socket.pause();
    const posted = await postUntilSlowConsumerDropped();
    socket.resume();

    expect(await client.closed).toEqual({ code: 4008, reason: "slow_consumer" });
    const error = client.log.frames.at(-1);
    expect(error).toMatchObject({ type: "error", code: "slow_consumer", fatal: true });
    const got = client.log.eventIds();
    expect(got.length).toBeLessThan(posted.length);
    expect(got).toEqual(posted.slice(0, got.length));

    const resumed = await openReadyWs(gw.wsUrl({ token: gw.keys.ui, since: error?.details.cursor }));
    await resumed.log.waitForEvents(posted.length - got.length, 30_000);
    expect([...got, ...resumed.log.eventIds()]).toEqual(posted);
    resumed.ws.terminate();
  });

  test("SSE: a reader that stops reading gets an error event and the end of the stream", async () => {
    const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${gw.url}/stream`, { headers: { authorization: `Bearer ${gw.keys.ui}` } }, resolve).on("error", reject),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
    let text = "";
    response.setEncoding("utf8");
    await new Promise<void>((resolve) => {
      const onData = (chunk: string) => {
        text += chunk;
        if (text.includes('"type":"ready"')) {
          response.off("data", onData);
          resolve();
        }
      };
      response.on("data", onData);
    });
    response.pause();
    const posted = await postUntilSlowConsumerDropped();
    const ended = new Promise<void>((resolve) => response.on("end", resolve));
    response.on("data", (chunk: string) => {
      text += chunk;
    });
    response.resume();
    await ended;

    const frames = text
      .split("\n\n")
      .flatMap((block) => block.split("\n").filter((line) => line.startsWith("data: ")))
      .map((line) => JSON.parse(line.slice(6)));
    const events = frames.filter((f) => f.type === "event").map((f) => f.event.id);
    expect(events.length).toBeLessThan(posted.length);
    expect(events).toEqual(posted.slice(0, events.length));
    expect(frames.at(-1)).toMatchObject({ type: "error", code: "slow_consumer", fatal: true });
  });
});

describe("connection lifetime", () => {
  test("a token that expires while connected closes with 4001 token_expired", async () => {
    // `exp` is in whole seconds, so a token of n seconds lives between n - 1 and n: 4 leaves a
    // loaded machine at least 3 s to connect and read the ready frame before it expires.
    const token = await gw.signToken("ui", 4);
    const client = await openReadyWs(gw.wsUrl({ token }));
    expect(Date.parse(client.log.frames[0]?.expiresAt)).toBeGreaterThan(Date.now() - 1000);
    expect(await client.closed).toEqual({ code: 4001, reason: "token_expired" });
    expect(client.log.frames.at(-1)).toMatchObject({ type: "error", code: "token_expired", fatal: true });
  });

  test("SSE: an expiring token ends the stream after a token_expired error frame", async () => {
    const token = await gw.signToken("ui", 4);
    const response = await fetch(`${gw.url}/stream?token=${token}`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"type":"ready"');
    expect(text.trim().split("\n").at(-1)).toContain('"code":"token_expired"');
  });

  test("heartbeats carry the cursor; a peer that never answers pings is dropped, a live one is kept", async () => {
    // Its own gateway: the short idle timeout would also drop the paused consumers above. The
    // timeout leaves a loaded machine's test process ample time to answer the pings (the live
    // peer), while the silent one, which never answers, is still dropped within seconds.
    const quick = await startStreamGateway({
      stream: { GATEWAY_STREAM_HEARTBEAT_MS: "100", GATEWAY_STREAM_IDLE_TIMEOUT_MS: "3000" },
    });
    const live = await openReadyWs(quick.wsUrl({ token: quick.keys.ui }));
    const silent = net.connect(Number(new URL(quick.url).port), "127.0.0.1");
    silent.write(
      [
        `GET /ws?token=${quick.keys.ui} HTTP/1.1`,
        `Host: 127.0.0.1`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        "",
        "",
      ].join("\r\n"),
    );
    let received = "";
    silent.on("data", (chunk) => {
      received += chunk.toString("latin1");
    });
    await new Promise<void>((resolve) => silent.on("close", () => resolve()));
    expect(received.startsWith("HTTP/1.1 101")).toBe(true);

    await live.log.waitFor(() => live.log.frames.filter((f) => f.type === "heartbeat").length >= 3, "heartbeats");
    expect(live.ws.readyState).toBe(live.ws.OPEN);
    const heartbeat = live.log.frames.find((f) => f.type === "heartbeat");
    expect(heartbeat?.cursor).toMatch(/^\d+$/);
    live.ws.terminate();
    await quick.kill();
  });
});

test("a gateway shutting down closes subscribers with 1001 and exits", async () => {
  const own = await startStreamGateway();
  const client = await openReadyWs(own.wsUrl({ token: own.keys.ui }));
  const exit = own.kill("SIGTERM");
  expect(await client.closed).toEqual({ code: 1001, reason: "shutting_down" });
  expect(await exit).toBe(0);
});
