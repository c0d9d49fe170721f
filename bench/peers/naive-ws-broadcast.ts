/**
 * Peer for the live benchmark: the naive broadcast a team would write with `ws`. A webhook is
 * verified (peer-signatures.ts), answered 202, and `JSON.stringify`'d into a
 * CloudEvents-like frame sent to every connected socket in a loop. No durability, no filters, no
 * resume. Its own process (the server: ws-peer-server.ts); prints `PORT <n>`. Env:
 * PEER_ESIGN_SECRET, PEER_STAFFING_SECRET.
 */
import { startWsPeer } from "./ws-peer-server.ts";

startWsPeer((wss, { id, source, data }) => {
  for (const client of wss.clients) {
    client.send(
      JSON.stringify({ specversion: "1.0", id, source, type: "webhook", time: new Date().toISOString(), data }),
    );
  }
});
