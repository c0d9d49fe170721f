/**
 * Peer for the proxy benchmark: node-http-proxy with what the gateway's proxy must do at least:
 * a client API key checked (SHA-256 compared with `timingSafeEqual`), the e-sign access token
 * fetched once and injected, `/api/esign/*` mapped onto the upstream's base path. Its own process;
 * prints `PORT <n>`. Env: PEER_UPSTREAM_BASE_URL, PEER_CLIENT_ID, PEER_CLIENT_SECRET,
 * PEER_CLIENT_KEY_SHA256 (hex).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import httpProxy from "http-proxy";

const baseUrl = new URL(process.env.PEER_UPSTREAM_BASE_URL ?? "http://127.0.0.1:1/api/public/v1");
const keyHash = Buffer.from(process.env.PEER_CLIENT_KEY_SHA256 ?? "", "hex");
const tokenAnswer = await fetch(`${baseUrl.href.replace(/\/$/, "")}/oauth/access-token`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ client_id: process.env.PEER_CLIENT_ID, client_secret: process.env.PEER_CLIENT_SECRET }),
});
const { access_token: token } = (await tokenAnswer.json()) as { access_token: string };

const proxy = httpProxy.createProxyServer({
  target: baseUrl.origin,
  agent: new (await import("node:http")).Agent({ keepAlive: true, maxSockets: 256 }),
});
proxy.on("proxyReq", (proxyReq) => proxyReq.setHeader("authorization", `Bearer ${token}`));
proxy.on("error", (_error, _req, res) => {
  if ("writeHead" in res && !res.headersSent) res.writeHead(502).end();
});

const PREFIX = "/api/esign";
const server = createServer((req, res) => {
  const auth = req.headers.authorization ?? "";
  const given = createHash("sha256").update(auth.slice(7)).digest();
  if (!auth.startsWith("Bearer ") || !timingSafeEqual(given, keyHash)) return void res.writeHead(401).end();
  if (!req.url?.startsWith(`${PREFIX}/`)) return void res.writeHead(404).end();
  req.url = `${baseUrl.pathname.replace(/\/$/, "")}${req.url.slice(PREFIX.length)}`;
  proxy.web(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`PORT ${address.port}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
