/**
 * `GET /ws`: the live stream over WebSocket through crossws (h3's `defineWebSocketHandler`).
 * The upgrade request is authorized before any socket exists; a refused subscriber still gets
 * the socket, one error frame and a close code with the error code as reason, because a browser
 * cannot read the status of a failed handshake. Client messages are size-limited JSON validated
 * with valibot; an invalid one answers a non-fatal error frame.
 */
import type { Hooks, Peer } from "crossws";
import { defineWebSocketHandler } from "h3";
import { createGatewayError } from "../errors.ts";
import { authorizeSubscriber, type Refusal, type StreamGrant } from "./authorize-subscriber.ts";
import type { LiveStream } from "./live-stream.ts";
import { parseClientMessage } from "./parse-client-message.ts";
import type { StreamDeps } from "./stream-deps.ts";
import { CLOSE_CODES, errorFrame, heartbeatFrame, type StreamErrorCode } from "./stream-frames.ts";
import { createStreamSession, type StreamSession, type StreamSink } from "./stream-session.ts";

/**
 * Supplied by a runtime adapter that can batch a peer's writes (Node: cork the socket); returns
 * the function that releases them.
 */
export type CorkPeer = (peer: Peer) => (() => void) | undefined;

/**
 * Supplied by a runtime adapter that sends text frames to a peer for less than `peer.send`
 * (Node: each event's frame encoded once for all subscribers and written as bytes); returns false
 * when it cannot, and `peer.send` is used per frame. `frames` may be several frames (a fan-out
 * turn's batch for this peer): each stays its own text frame, in order, and the runtime hands
 * them to the network in one write. One function for all peers: nothing is kept per peer.
 */
export type PeerTextSender = (peer: Peer, frames: string | readonly string[]) => boolean;

/**
 * Supplied by a runtime adapter whose WebSocket library keeps the upgrade request for the
 * peer's life (Node: crossws keeps the `IncomingMessage` and a `Request` around it); called once
 * the socket is open, it drops what the stream never reads again.
 */
export type ReleaseUpgrade = (peer: Peer) => void;

/** What a runtime adapter offers the WebSocket transport; each part is optional. */
export interface WebSocketPeerPort {
  cork?: CorkPeer;
  sendText?: PeerTextSender;
  releaseUpgrade?: ReleaseUpgrade;
}

/**
 * The sink of one WebSocket subscriber. A class (methods on the prototype) rather than an
 * object of closures: thousands of idle subscribers each hold one for the connection's life.
 */
class PeerSink implements StreamSink {
  private readonly peer: Peer;
  private readonly port: WebSocketPeerPort;
  /** Frames of the current fan-out turn while corked (see `cork`), handed over together at its end. */
  private batch: string[] | undefined = undefined;

  constructor(peer: Peer, port: WebSocketPeerPort) {
    this.peer = peer;
    this.port = port;
  }

  send(frame: string): void {
    if (this.batch) this.batch.push(frame);
    else this.write(frame);
  }

  private write(frames: string | readonly string[]): void {
    if (this.port.sendText?.(this.peer, frames)) return;
    if (typeof frames === "string") this.peer.send(frames);
    else for (const frame of frames) this.peer.send(frame);
  }

  /** Hands the held batch over (in order, before anything else reaches the peer). */
  private flush(): void {
    const held = this.batch;
    this.batch = undefined;
    if (held && held.length > 0) this.write(held.length === 1 ? (held[0] as string) : held);
  }

  heartbeat(cursor: number, now: number): void {
    // The same frame for every live subscriber of the turn: sent like event frames (its bytes
    // built once for all of them), not through `peer.send`, which encodes it again per peer.
    this.send(heartbeatFrame(cursor, now));
  }

  bufferedAmount(): number {
    return this.peer.bufferedAmount;
  }

  waitForDrain(threshold: number, timeoutMs: number): Promise<boolean> {
    return this.peer.waitForDrain({ threshold, signal: AbortSignal.timeout(timeoutMs), pollInterval: 20 }).then(
      () => true,
      () => false,
    );
  }

  end(code: StreamErrorCode): void {
    this.flush();
    this.peer.close(CLOSE_CODES[code], code);
  }

  /**
   * With a text sender, the turn's frames are held here and handed over as one batch (the
   * runtime writes them in one network write; every subscriber of an audience holds the same
   * frames, so their bytes are joined once, not per subscriber); else the runtime's cork.
   */
  cork(): (() => void) | undefined {
    if (this.port.sendText) {
      if (this.batch) return noop;
      this.batch = [];
      return () => this.flush();
    }
    const corkPeer = this.port.cork;
    return corkPeer ? (corkPeer(this.peer) ?? noop) : undefined;
  }
}

function noop() {}

/**
 * How long a refused peer may take to answer the close frame before its socket is cut: a client
 * that ignores the close frame would otherwise hold the socket for the WebSocket library's own
 * close timeout (30 s), which a flood of refused upgrades turns into exhausted sockets.
 */
const REFUSED_CLOSE_DEADLINE_MS = 1000;

function refusedHooks(refusal: Refusal): Partial<Hooks> {
  let deadline: ReturnType<typeof setTimeout> | undefined;
  return {
    open(peer) {
      peer.send(errorFrame(refusal.code, refusal.message, true, refusal.details));
      peer.close(CLOSE_CODES[refusal.code], refusal.code);
      deadline = setTimeout(() => peer.terminate(), REFUSED_CLOSE_DEADLINE_MS);
    },
    close() {
      clearTimeout(deadline);
    },
  };
}

function acceptedHooks(live: LiveStream, grant: StreamGrant, port: WebSocketPeerPort): Partial<Hooks> {
  let session: StreamSession | undefined;
  return {
    open(peer) {
      port.releaseUpgrade?.(peer);
      session = createStreamSession(live, grant, new PeerSink(peer, port));
      return session.start();
    },
    message(peer, message) {
      const text = message.text();
      const parsed = parseClientMessage(text);
      if (!parsed.ok) {
        peer.send(parsed.errorFrame);
        return;
      }
      session?.handle(parsed.message);
    },
    close() {
      session?.dispose();
    },
    error() {
      session?.dispose();
    },
  };
}

/** The `/ws` route handler. */
export function createWebSocketRoute(ctx: StreamDeps, live: LiveStream, port: WebSocketPeerPort = {}) {
  return defineWebSocketHandler(
    async (event) => {
      const result = await authorizeSubscriber(ctx, live.destinationIds, event.req, event.url);
      return result.ok ? acceptedHooks(live, result.grant, port) : refusedHooks(result.refusal);
    },
    () => {
      throw createGatewayError(426, "invalid_request", "this endpoint speaks WebSocket (send an Upgrade request)", {
        headers: { upgrade: "websocket" },
      });
    },
  );
}
