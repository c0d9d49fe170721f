/**
 * A real HTTP receiver on 127.0.0.1 (random port) for the workerd delivery tests: it records
 * every request it gets on `/hook` (http destination) and `/queue` (the test queue consumer
 * forwards Cloudflare Queues messages here), and can be told to fail the next N requests whose
 * body contains a string. Control (JSON): `GET /received?path=/hook` lists what arrived
 * (failed ones under `<path>-failed`); `POST /fail` `{ "count": n, "status": 503, "match": "evt-1", "path": "/hook" }`
 * arms failures; `POST /reset` forgets everything; `GET /closed-port` names a loopback port nothing
 * listens on. `GET /compressed/<anything>/<gzip|deflate|deflate-raw|br>/<small|large>` is an
 * upstream that compresses its JSON answer whatever it was asked (compressed-answers.ts), and
 * records the request (its `accept-encoding` included) under `/compressed`.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { COMPRESSED_ANSWERS } from "./compressed-answers.ts";
import { findFreePort } from "./redis-server.ts";

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The exact bytes of the body, base64. */
  bodyBase64: string;
}

const ENCODERS: Record<string, [header: string, encode: (b: Buffer) => Buffer]> = {
  gzip: ["gzip", gzipSync],
  deflate: ["deflate", deflateSync],
  "deflate-raw": ["deflate", deflateRawSync],
  br: ["br", brotliCompressSync],
};

export interface SinkReceiver {
  url: string;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts the receiver; the caller closes it. `stats` answers `GET /stats` (e.g. fake upstream counters). */
export async function startSinkReceiver(stats: () => unknown = () => ({})): Promise<SinkReceiver> {
  let received: ReceivedRequest[] = [];
  let failures = { count: 0, status: 503, match: "", path: "" };
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const raw = await readBody(request);
    const body = raw.toString("utf8");
    const bodyBase64 = raw.toString("base64");
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.method === "GET" && url.pathname === "/received") {
      const path = url.searchParams.get("path");
      return json(
        200,
        received.filter((r) => !path || r.path === path),
      );
    }
    if (request.method === "GET" && url.pathname === "/stats") return json(200, stats());
    // A loopback port nothing listens on (the sink conformance suite's unreachable destination).
    if (request.method === "GET" && url.pathname === "/closed-port") return json(200, { port: await findFreePort() });
    if (request.method === "POST" && url.pathname === "/fail") {
      failures = {
        status: 503,
        match: "",
        path: "",
        ...(JSON.parse(body) as Partial<typeof failures>),
      } as typeof failures;
      return json(200, failures);
    }
    if (request.method === "POST" && url.pathname === "/reset") {
      received = [];
      failures = { count: 0, status: 503, match: "", path: "" };
      return json(200, {});
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers[name] = value;
    if (request.method === "GET" && url.pathname.startsWith("/compressed/")) {
      const [, , , kind = "", size = ""] = url.pathname.split("/");
      const entry = ENCODERS[kind];
      const plain = COMPRESSED_ANSWERS[size as keyof typeof COMPRESSED_ANSWERS];
      if (!entry || plain === undefined) return json(404, { error: "no such answer" });
      received.push({ path: "/compressed", headers, body, bodyBase64 });
      const encoded = entry[1](Buffer.from(plain));
      response.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": entry[0],
        "content-length": encoded.length,
      });
      response.end(encoded);
      return;
    }
    if (failures.count > 0 && body.includes(failures.match) && (!failures.path || failures.path === url.pathname)) {
      failures.count--;
      received.push({ path: `${url.pathname}-failed`, headers, body, bodyBase64 });
      return json(failures.status, { error: "failing on purpose" });
    }
    received.push({ path: url.pathname, headers, body, bodyBase64 });
    return json(200, { ok: true });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
