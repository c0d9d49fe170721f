/**
 * Peer for the live benchmark (issue 35 item 3): the bare `ws` broadcast, written the way `ws`'s
 * own README broadcasts. A webhook is verified (peer-signatures.ts), answered 202, serialized
 * once into a CloudEvents-like frame (one `JSON.stringify`, one UTF-8 encoding), and that one
 * buffer is handed to `ws.send` (as text) for every open socket. No durability, no filters, no
 * resume, no heartbeats. Compare naive-ws-broadcast.ts, which stringifies per socket. Its own
 * process (the server: ws-peer-server.ts); prints `PORT <n>`. Env: PEER_ESIGN_SECRET,
 * PEER_STAFFING_SECRET.
 */
import WebSocket from "ws";
import { startWsPeer } from "./ws-peer-server.ts";

const TEXT = { binary: false };

startWsPeer((wss, { id, source, data }) => {
  const frame = Buffer.from(
    JSON.stringify({ specversion: "1.0", id, source, type: "webhook", time: new Date().toISOString(), data }),
  );
  for (const client of wss.clients) if (client.readyState === WebSocket.OPEN) client.send(frame, TEXT);
});
