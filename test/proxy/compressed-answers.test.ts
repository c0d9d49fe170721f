/**
 * Proxied answers stay what they say (docs/api-proxy.md#compressed-answers), through a real
 * gateway process: the gateway asks the upstream for `Accept-Encoding: identity`, and an upstream
 * that compresses anyway (gzip, deflate zlib-wrapped or raw, br) has its answer decoded, small
 * (read whole) or large (streamed), so the client gets readable bytes and no `Content-Encoding`.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { StaffingServer } from "../helpers/emulators.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { fullClient, newKey, startProxyProcess } from "./proxy-fixtures.ts";

const key = newKey();
const auth = { authorization: `Bearer ${key}`, "accept-encoding": "gzip, deflate, br" };
const SMALL = JSON.stringify({ id: "c-1", name: "Ada", note: "compressed anyway" });
// Past the 64 KiB the Node adapter reads whole: streamed (incompressible, so it stays large).
const LARGE = JSON.stringify({ id: "c-2", blob: randomBytes(200 * 1024).toString("base64") });

const ENCODERS: Record<string, [header: string, encode: (b: Buffer) => Buffer]> = {
  gzip: ["gzip", gzipSync],
  deflate: ["deflate", deflateSync],
  "deflate-raw": ["deflate", deflateRawSync],
  br: ["br", brotliCompressSync],
};

const seenAcceptEncoding: (string | undefined)[] = [];
const upstream = createServer((req, res) => {
  req.resume();
  seenAcceptEncoding.push(req.headers["accept-encoding"]);
  const [, , kind, size] = (req.url ?? "").split("/");
  const entry = ENCODERS[kind ?? ""];
  const plain = Buffer.from(size === "large" ? LARGE : SMALL);
  if (!entry) {
    res.writeHead(404).end();
    return;
  }
  const [header, encode] = entry;
  const body = encode(plain);
  res.writeHead(200, { "content-type": "application/json", "content-encoding": header, "content-length": body.length });
  res.end(body);
});

let gateway: GatewayProcess;
beforeAll(async () => {
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const staffing = {
    baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    apiKey: "compressing-upstream-key",
  } as unknown as StaffingServer;
  gateway = await startProxyProcess({ staffing, clients: [fullClient(key)] });
}, 60_000);
afterAll(async () => {
  await gateway?.kill();
  await new Promise((resolve) => upstream.close(resolve));
});

test.each(Object.keys(ENCODERS).flatMap((kind) => [[kind, "small"] as const, [kind, "large"] as const]))(
  "a %s answer (%s) arrives decoded, without Content-Encoding",
  async (kind, size) => {
    const answer = await fetch(`${gateway.url}/api/staffing/c/${kind}/${size}`, { headers: auth });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-encoding")).toBeNull();
    const length = answer.headers.get("content-length");
    const text = await answer.text();
    if (length !== null) expect(Number(length)).toBe(Buffer.byteLength(text));
    expect(text).toBe(size === "large" ? LARGE : SMALL);
    expect(JSON.parse(text).id).toBe(size === "large" ? "c-2" : "c-1");
    // The client's Accept-Encoding was not passed on: the gateway asked for the plain body.
    expect(seenAcceptEncoding.at(-1)).toBe("identity");
  },
  60_000,
);
