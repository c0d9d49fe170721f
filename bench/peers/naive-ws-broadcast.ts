/**
 * Peer for the live benchmark: the naive broadcast a team would write with `ws`. A webhook is
 * verified (peer-signatures.ts), answered 202, and `JSON.stringify`'d into a
 * CloudEvents-like frame sent to every connected socket in a loop. No durability, no filters, no
 * resume. Its own process; prints `PORT <n>`. Env: PEER_ESIGN_SECRET, PEER_STAFFING_SECRET.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { verifyPeerSignature } from "./peer-signatures.ts";

const server = createServer((req, res) => {
  const source = /^\/webhooks\/([a-z]+)$/.exec(req.url ?? "")?.[1];
  if (req.method !== "POST" || !source) return void res.writeHead(404).end();
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    if (!verifyPeerSignature(source, body, String(req.headers["x-svc-signature"] ?? "")))
      return void res.writeHead(401).end();
    const id = randomUUID();
    res.writeHead(202, { "content-type": "application/json" });
    res.end(JSON.stringify({ id, duplicate: false }));
    const data = JSON.parse(body.toString("utf8")) as unknown;
    for (const client of wss.clients) {
      client.send(
        JSON.stringify({ specversion: "1.0", id, source, type: "webhook", time: new Date().toISOString(), data }),
      );
    }
  });
});
const wss = new WebSocketServer({ server, path: "/ws", perMessageDeflate: false });
wss.on("connection", (ws) => ws.send(JSON.stringify({ type: "ready" })));
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`PORT ${address.port}`);
});
process.on("SIGTERM", () => {
  for (const client of wss.clients) client.terminate();
  server.close(() => process.exit(0));
});
