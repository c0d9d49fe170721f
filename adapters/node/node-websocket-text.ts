/**
 * The Node text-frame sender of the live stream (`PeerTextSender`, src/stream/websocket-transport.ts):
 * a fan-out turn sends the same frame string to every subscriber, and a server's WebSocket frames
 * are not masked, so the whole frame (header and UTF-8 payload) is built once per event (the last
 * one is remembered) and written to each peer's TCP socket as one buffer: one write per
 * subscriber, nothing allocated per subscriber. `peer.send` would copy its options per call,
 * encode the string again for every subscriber and write header and payload as two buffers.
 * Whenever `ws` itself has frames queued (it never does without compression) or the socket is
 * not open, the frame goes through `ws` instead. Without a `ws` socket behind the peer, it
 * answers false and `peer.send` is used. Nothing is kept per peer.
 */
import type { Socket } from "node:net";
import type { Peer } from "crossws";
import type { PeerTextSender } from "../../src/stream/websocket-transport.ts";

interface NodeWs {
  readyState: number;
  _socket?: Socket;
  _sender?: { _state: number };
  send(data: Buffer, options: { binary: boolean; compress: boolean }): void;
}

const OPEN = 1;
/** `ws`'s Sender state when nothing is queued behind compression or a Blob read. */
const SENDER_IDLE = 0;
const TEXT = { binary: false, compress: false };

let lastFrame: string | undefined;
let lastPayload: Buffer = Buffer.alloc(0);
let lastWire: Buffer = Buffer.alloc(0);

/** An unmasked, final text frame (RFC 6455 §5.2) around `payload`. */
function frameText(payload: Buffer): Buffer {
  const length = payload.length;
  const headerLength = length < 126 ? 2 : length <= 0xffff ? 4 : 10;
  const wire = Buffer.allocUnsafe(headerLength + length);
  wire[0] = 0x81;
  if (length < 126) wire[1] = length;
  else if (length <= 0xffff) {
    wire[1] = 126;
    wire.writeUInt16BE(length, 2);
  } else {
    wire[1] = 127;
    wire.writeBigUInt64BE(BigInt(length), 2);
  }
  payload.copy(wire, headerLength);
  return wire;
}

/** Payload and wire bytes of `frame`, built once while the same frame goes to many peers. */
function encode(frame: string): void {
  if (frame === lastFrame) return;
  lastPayload = Buffer.from(frame, "utf8");
  lastWire = frameText(lastPayload);
  lastFrame = frame;
}

export const sendNodeWebSocketText: PeerTextSender = (peer: Peer, frame: string) => {
  // crossws keeps the `ws` WebSocket of a Node peer in `_internal.ws` (peer.websocket may be a Proxy).
  const ws = (peer as unknown as { _internal?: { ws?: Partial<NodeWs> } })._internal?.ws;
  if (!ws || typeof ws.send !== "function") return false;
  const raw = ws as NodeWs;
  encode(frame);
  const socket = raw._socket;
  if (raw.readyState === OPEN && socket && !socket.destroyed && raw._sender?._state === SENDER_IDLE) {
    socket.write(lastWire);
  } else {
    raw.send(lastPayload, TEXT);
  }
  return true;
};
