/**
 * Drops what crossws's Node adapter keeps of a WebSocket subscriber's upgrade request for the
 * peer's life (`ReleaseUpgrade`, src/stream/websocket-transport.ts): the `IncomingMessage` with
 * its headers, raw headers and stream state, the srvx `Request` around it (URL, search params,
 * the upgrade's `head` buffer) and crossws's own `Request` proxy, about 2 KB per idle connection.
 * After the handshake crossws reads only `nodeReq.socket` (`peer.remoteAddress`) and
 * `nodeReq._context` (`peer.context`, the key of the peer's resolved hooks); those two stay.
 * Written against crossws 0.4 (pinned in package.json); a peer of another shape is left as is.
 */
import type { Socket } from "node:net";
import type { Peer } from "crossws";
import type { ReleaseUpgrade } from "../../src/stream/websocket-transport.ts";

interface NodePeerInternal {
  nodeReq?: { socket?: Socket; _context?: unknown };
  request?: unknown;
}

export const releaseNodeWebSocketUpgrade: ReleaseUpgrade = (peer: Peer) => {
  const internal = (peer as unknown as { _internal?: NodePeerInternal })._internal;
  const nodeReq = internal?.nodeReq;
  if (!internal || !nodeReq || !("_context" in nodeReq)) return;
  internal.nodeReq = { socket: nodeReq.socket, _context: nodeReq._context };
  // Without a request crossws resolves the peer's hooks by its context alone (they are cached
  // under it since the upgrade) and `peer.websocket` is the `ws` socket itself, not a Proxy.
  internal.request = undefined;
};
