/**
 * The Node text-frame sender of the live stream (`PeerTextSender`, src/stream/websocket-transport.ts):
 * a fan-out turn sends the same frame string to every subscriber, and a server's WebSocket frames
 * are not masked, so the whole frame (header and UTF-8 payload) is built once per event and
 * written to each peer's TCP socket as one buffer: one write per subscriber, nothing allocated
 * per subscriber. A turn of several events hands each peer its batch of frames: their wire bytes
 * are joined once for every peer that gets the same frames (an audience) and written in one
 * write, where a corked socket would build a vector of buffers per peer. `peer.send` would copy
 * its options per call, encode the string again for every subscriber and write header and
 * payload as two buffers. Whenever `ws` itself has frames queued (it never does without
 * compression) or the socket is not open, the frames go through `ws` instead. Without a `ws`
 * socket behind the peer, it answers false and `peer.send` is used. Nothing is kept per peer.
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

/**
 * Wire bytes of the frames of the last turns, by frame: a turn's frames are encoded once, however
 * many peers (and audiences) they go to. Bounded: emptied before it would pass 64 frames or 1 MiB.
 */
const WIRE_CACHE_FRAMES = 64;
const WIRE_CACHE_BYTES = 1024 * 1024;
const wires = new Map<string, Buffer>();
let wireBytes = 0;

function wireOf(frame: string): Buffer {
  let wire = wires.get(frame);
  if (wire === undefined) {
    wire = frameText(Buffer.from(frame, "utf8"));
    if (wires.size >= WIRE_CACHE_FRAMES || wireBytes + wire.length > WIRE_CACHE_BYTES) {
      wires.clear();
      wireBytes = 0;
    }
    wires.set(frame, wire);
    wireBytes += wire.length;
  }
  return wire;
}

/**
 * The last batch joined: peers of one audience get the same frames in the same turn, so they
 * share its bytes. Dropped after the turn (a turn after a stall may join many events).
 */
let lastBatch: { frames: readonly string[]; wire: Buffer } | undefined;
const forgetBatch = () => {
  lastBatch = undefined;
};

function wireOfBatch(frames: readonly string[]): Buffer {
  const last = lastBatch;
  if (last && last.frames.length === frames.length && last.frames.every((frame, i) => frame === frames[i])) {
    return last.wire;
  }
  const wire = Buffer.concat(frames.map(wireOf));
  if (!last) setImmediate(forgetBatch);
  lastBatch = { frames, wire };
  return wire;
}

export const sendNodeWebSocketText: PeerTextSender = (peer: Peer, frames: string | readonly string[]) => {
  // crossws keeps the `ws` WebSocket of a Node peer in `_internal.ws` (peer.websocket may be a Proxy).
  const ws = (peer as unknown as { _internal?: { ws?: Partial<NodeWs> } })._internal?.ws;
  if (!ws || typeof ws.send !== "function") return false;
  const raw = ws as NodeWs;
  const socket = raw._socket;
  if (raw.readyState === OPEN && socket && !socket.destroyed && raw._sender?._state === SENDER_IDLE) {
    socket.write(typeof frames === "string" ? wireOf(frames) : wireOfBatch(frames));
  } else if (typeof frames === "string") {
    raw.send(Buffer.from(frames, "utf8"), TEXT);
  } else {
    for (const frame of frames) raw.send(Buffer.from(frame, "utf8"), TEXT);
  }
  return true;
};
