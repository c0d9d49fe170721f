/**
 * The Node text sender (adapters/node/node-websocket-text.ts) hands a peer one fan-out turn's
 * frames as one write of joined bytes, shared by every peer that gets the same frames. Checked
 * at the far end, with real `ws` clients on loopback: each frame arrives as its own text frame,
 * in order, with its exact text, at every length encoding of RFC 6455, whether the batch's bytes
 * were built for this peer or reused from another's; and through `ws` itself (compression on,
 * a socket that is closing) the same frames arrive as `ws` would send them.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Peer } from "crossws";
import { afterEach, expect, test } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { sendNodeWebSocketText } from "../../adapters/node/node-websocket-text.ts";

interface Pair {
  /** The server side, shaped as crossws keeps a Node peer (`_internal.ws`). */
  peer: Peer;
  server: WebSocket;
  client: WebSocket;
  /** Every message the client got: its text and whether it was binary. */
  got: { text: string; binary: boolean }[];
}

const servers: Server[] = [];
const clients: WebSocket[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.terminate();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A `ws` server on a random loopback port and `count` connected clients. */
async function connect(count: number, perMessageDeflate = false): Promise<Pair[]> {
  const http = createServer();
  servers.push(http);
  const wss = new WebSocketServer({ server: http, perMessageDeflate });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  const { port } = http.address() as AddressInfo;
  const pairs: Pair[] = [];
  for (let i = 0; i < count; i++) {
    const accepted = once(wss, "connection") as Promise<[WebSocket]>;
    const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate });
    clients.push(client);
    const got: Pair["got"] = [];
    client.on("message", (data: WebSocket.RawData, binary: boolean) => got.push({ text: data.toString(), binary }));
    const [[server]] = await Promise.all([accepted, once(client, "open")]);
    pairs.push({ peer: { _internal: { ws: server } } as unknown as Peer, server, client, got });
  }
  return pairs;
}

/** Resolves once `pair`'s client holds `count` messages (bounded by the test's timeout). */
async function received(pair: Pair, count: number): Promise<void> {
  while (pair.got.length < count) await once(pair.client, "message");
}

const frame = (n: number, padding = 0) => JSON.stringify({ type: "event", n, pad: "é".repeat(padding) });

test("a batch of frames reaches every peer as separate text frames, in order, with their exact text", async () => {
  const pairs = await connect(3);
  // 7-bit, 16-bit and 64-bit payload lengths in one batch (é is two bytes in UTF-8).
  const batch = [frame(1), frame(2, 100), frame(3, 40_000), frame(4)];
  // One array for two peers (the bytes are joined once), a copy of it for the third (same frames,
  // another array: the joined bytes must be the same).
  expect(sendNodeWebSocketText(pairs[0]?.peer as Peer, batch)).toBe(true);
  expect(sendNodeWebSocketText(pairs[1]?.peer as Peer, batch)).toBe(true);
  expect(sendNodeWebSocketText(pairs[2]?.peer as Peer, [...batch])).toBe(true);
  for (const pair of pairs) {
    await received(pair, batch.length);
    expect(pair.got).toEqual(batch.map((text) => ({ text, binary: false })));
  }
});

test("peers that get different subsets of a turn's frames each get exactly theirs", async () => {
  const [a, b, c] = await connect(3);
  const frames = [frame(1), frame(2, 200), frame(3)];
  // Interleaved as a turn with two audiences sends them: the joined bytes of the last batch must
  // not leak into a peer whose batch differs.
  sendNodeWebSocketText(a?.peer as Peer, frames);
  sendNodeWebSocketText(b?.peer as Peer, [frames[0] as string, frames[2] as string]);
  sendNodeWebSocketText(c?.peer as Peer, frames[1] as string);
  sendNodeWebSocketText(a?.peer as Peer, frames[2] as string);
  await received(a as Pair, 4);
  await received(b as Pair, 2);
  await received(c as Pair, 1);
  expect(a?.got.map((m) => m.text)).toEqual([...frames, frames[2]]);
  expect(b?.got.map((m) => m.text)).toEqual([frames[0], frames[2]]);
  expect(c?.got.map((m) => m.text)).toEqual([frames[1]]);
});

test("with permessage-deflate negotiated, a batch goes through ws and still arrives frame by frame", async () => {
  const [pair] = (await connect(1, true)) as [Pair];
  const batch = [frame(1, 3_000), frame(2), frame(3, 3_000)];
  // ws compresses the first frame asynchronously and holds its Sender busy meanwhile: the batch
  // must queue behind it in ws, not be written around it.
  pair.server.send(batch[0] as string);
  expect((pair.server as unknown as { _sender: { _state: number } })._sender._state).not.toBe(0);
  sendNodeWebSocketText(pair.peer, batch.slice(1));
  await received(pair, batch.length);
  expect(pair.got).toEqual(batch.map((text) => ({ text, binary: false })));
});

test("a peer without a ws socket is declined (the transport falls back to peer.send)", () => {
  expect(sendNodeWebSocketText({} as Peer, [frame(1), frame(2)])).toBe(false);
  expect(sendNodeWebSocketText({ _internal: {} } as unknown as Peer, frame(1))).toBe(false);
});
