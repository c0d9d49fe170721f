/**
 * What the live benchmark's `ws` peers (naive-ws-broadcast.ts, ws-broadcast.ts) share: a bare
 * `node:http` server taking `POST /webhooks/<source>`, each webhook verified
 * (peer-signatures.ts) and answered 202 before `broadcast` sends it to the sockets of the
 * `ws` server on `/ws` (each greeted with `{"type":"ready"}`); 127.0.0.1 on a free port, printed
 * as `PORT <n>`; SIGTERM ends every socket and the process. The peers differ in `broadcast` only.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { verifyPeerSignature } from "./peer-signatures.ts";

/** One verified webhook: its id (answered to the sender), source and parsed body. */
export type Broadcast = (wss: WebSocketServer, webhook: { id: string; source: string; data: unknown }) => void;

/** Starts the peer; `broadcast` runs after each 202 was written. */
export function startWsPeer(broadcast: Broadcast): void {
  const server = createServer((req, res) => {
    const source = /^\/webhooks\/([a-z]+)$/.exec(req.url ?? "")?.[1];
    if (req.method !== "POST" || !source) return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (!verifyPeerSignature(source, body, String(req.headers["x-svc-signature"] ?? ""))) {
        return void res.writeHead(401).end();
      }
      const id = randomUUID();
      res.writeHead(202, { "content-type": "application/json" });
      res.end(JSON.stringify({ id, duplicate: false }));
      broadcast(wss, { id, source, data: JSON.parse(body.toString("utf8")) as unknown });
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
}
