/**
 * `GET /ws`: the live stream over WebSocket through crossws (h3's `defineWebSocketHandler`).
 * The upgrade request is authorized before any socket exists; a refused subscriber still gets
 * the socket, one error frame and a close code with the error code as reason, because a browser
 * cannot read the status of a failed handshake. Client messages are size-limited JSON validated
 * with valibot; an invalid one answers a non-fatal error frame.
 */
import type { Hooks, Peer } from "crossws";
import { defineWebSocketHandler } from "h3";
import * as v from "valibot";
import { createGatewayError } from "../errors.ts";
import { authorizeSubscriber, type Refusal, type StreamGrant } from "./authorize-subscriber.ts";
import type { LiveStream } from "./live-stream.ts";
import type { StreamDeps } from "./stream-deps.ts";
import { CLOSE_CODES, ClientMessageSchema, errorFrame, heartbeatFrame } from "./stream-frames.ts";
import { createStreamSession, type StreamSession, type StreamSink } from "./stream-session.ts";

/** Largest client message accepted, in characters. */
const MAX_MESSAGE_LENGTH = 16 * 1024;

/**
 * Supplied by a runtime adapter that can batch a peer's writes (Node: cork the socket); returns
 * the function that releases them.
 */
export type CorkPeer = (peer: Peer) => (() => void) | undefined;

/**
 * Supplied by a runtime adapter that sends a text frame to a peer for less than `peer.send`
 * (Node: each event's frame encoded once for all subscribers and handed to `ws` as bytes);
 * returns undefined to use `peer.send`. Called once per peer.
 */
export type PeerTextSender = (peer: Peer) => ((frame: string) => void) | undefined;

function peerSink(peer: Peer, corkPeer: CorkPeer | undefined, textSender: PeerTextSender | undefined): StreamSink {
  // Methods, not arrow properties: one sink per subscriber, and each named arrow costs a
  // property store of its own under tsx (kept function names), a few hundred bytes per connection.
  const fast = textSender?.(peer);
  const sink: StreamSink = {
    send(frame) {
      if (fast) fast(frame);
      else peer.send(frame);
    },
    heartbeat(cursor, now) {
      peer.send(heartbeatFrame(cursor, now));
    },
    bufferedAmount() {
      return peer.bufferedAmount;
    },
    waitForDrain(threshold, timeoutMs) {
      return peer.waitForDrain({ threshold, signal: AbortSignal.timeout(timeoutMs), pollInterval: 20 }).then(
        () => true,
        () => false,
      );
    },
    end(code) {
      peer.close(CLOSE_CODES[code], code);
    },
  };
  if (corkPeer) {
    sink.cork = () => corkPeer(peer) ?? noop;
  }
  return sink;
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

function acceptedHooks(
  live: LiveStream,
  grant: StreamGrant,
  corkPeer: CorkPeer | undefined,
  textSender: PeerTextSender | undefined,
): Partial<Hooks> {
  let session: StreamSession | undefined;
  return {
    open(peer) {
      session = createStreamSession(live, grant, peerSink(peer, corkPeer, textSender));
      return session.start();
    },
    message(peer, message) {
      const text = message.text();
      let input: unknown;
      try {
        input = text.length <= MAX_MESSAGE_LENGTH ? JSON.parse(text) : undefined;
      } catch {
        input = undefined;
      }
      const parsed = v.safeParse(ClientMessageSchema, input);
      if (!parsed.success) {
        peer.send(
          errorFrame("invalid_request", "invalid message (expected subscribe, unsubscribe or ping JSON)", false, {
            issues: parsed.issues.slice(0, 5).map((issue) => ({ path: v.getDotPath(issue), message: issue.message })),
          }),
        );
        return;
      }
      session?.handle(parsed.output);
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
export function createWebSocketRoute(
  ctx: StreamDeps,
  live: LiveStream,
  corkPeer?: CorkPeer,
  textSender?: PeerTextSender,
) {
  return defineWebSocketHandler(
    async (event) => {
      const result = await authorizeSubscriber(ctx, live.destinationIds, event.req, event.url);
      return result.ok ? acceptedHooks(live, result.grant, corkPeer, textSender) : refusedHooks(result.refusal);
    },
    () => {
      throw createGatewayError(426, "invalid_request", "this endpoint speaks WebSocket (send an Upgrade request)", {
        headers: { upgrade: "websocket" },
      });
    },
  );
}
