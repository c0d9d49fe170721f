/**
 * The Node text-frame sender of the live stream (`PeerTextSender`, src/stream/websocket-transport.ts):
 * a fan-out turn sends the same frame string to every subscriber, so it is encoded to UTF-8 once
 * (the last frame is remembered) and the bytes go straight to the peer's `ws` WebSocket as a text
 * frame. `peer.send` would copy its options per call and leave `ws` to encode the string again for
 * every subscriber. Without a `ws` socket behind the peer, `peer.send` is used.
 */
import type { Peer } from "crossws";
import type { PeerTextSender } from "../../src/stream/websocket-transport.ts";

interface NodeWs {
  send(data: Buffer, options: { binary: boolean; compress: boolean }): void;
}

const TEXT = { binary: false, compress: false };

let lastFrame: string | undefined;
let lastBytes: Buffer = Buffer.alloc(0);

/** UTF-8 bytes of `frame`, encoded once while the same frame goes to many peers. */
function bytesOf(frame: string): Buffer {
  if (frame !== lastFrame) {
    lastBytes = Buffer.from(frame, "utf8");
    lastFrame = frame;
  }
  return lastBytes;
}

export const sendNodeWebSocketText: PeerTextSender = (peer: Peer) => {
  // crossws keeps the `ws` WebSocket of a Node peer in `_internal.ws` (peer.websocket may be a Proxy).
  const ws = (peer as unknown as { _internal?: { ws?: Partial<NodeWs> } })._internal?.ws;
  if (!ws || typeof ws.send !== "function") return undefined;
  const raw = ws as NodeWs;
  return (frame) => raw.send(bytesOf(frame), TEXT);
};
