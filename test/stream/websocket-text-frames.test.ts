/**
 * Live event frames reach WebSocket subscribers as text frames with the exact JSON of the event,
 * when the Node adapter sends each event's frame as bytes encoded once for all subscribers
 * (adapters/node/node-websocket-text.ts). A binary frame would reach a browser as a Blob, and
 * bytes shared between subscribers must not mix two events' frames.
 */

import { afterAll, beforeAll, expect, test } from "vitest";
import type WebSocket from "ws";
import { openReadyWs, type StreamGateway, startStreamGateway, type WsClient } from "./stream-fixtures.ts";

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
