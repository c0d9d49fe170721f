/**
 * Behind a trusted proxy (`server.trustProxy`, the usual deployment) the Node webhook fast path
 * answers as h3 does: two real gateway processes with the same configuration (trusting the proxy
 * at 127.0.0.1, one request in flight per client address), one with `GATEWAY_WEBHOOK_FAST_PATH=off`,
 * get the same requests and must give the same answers and log lines. The client address both
 * take from `X-Forwarded-For` (one policy: resolveClientAddress) shows in the per-client cap: a
 * forwarded client with a request in flight is refused 429 on both, another client is not, and a
 * peer that is not the trusted proxy is never taken at its header's word.
 */
import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type GatewayProcess, makeSecrets } from "../helpers/gateway-process.ts";
import { esignDelivery, type SignedDelivery } from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "./gateway-fixtures.ts";
import { openStreamedRequest, type StreamedRequest } from "./streamed-request.ts";

interface RawAnswer {
  status: number;
  /** Lower-cased header pairs in the order sent; `date` and the framing headers left out. */
  headers: [string, string][];
  body: string;
}

const FRAMING = new Set(["date", "content-length", "transfer-encoding", "connection", "keep-alive"]);

/** One request on its own connection from `localAddress`; the answer as it came off the wire. */
function send(
  baseUrl: string,
  path: string,
  init: { headers: Record<string, string>; body: Uint8Array; localAddress?: string },
): Promise<RawAnswer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: "POST",
        headers: init.headers,
        agent: false,
        localAddress: init.localAddress ?? "127.0.0.1",
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const headers: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = (res.rawHeaders[i] as string).toLowerCase();
            if (!FRAMING.has(name)) headers.push([name, res.rawHeaders[i + 1] as string]);
          }
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(Buffer.from(init.body));
  });
}

const secrets = makeSecrets();
let fast: GatewayProcess;
let routed: GatewayProcess;

function start(env: Record<string, string>) {
  return startEditedGatewayProcess(
    (config) => {
      config.log = { level: "debug" };
      (config.server as Record<string, unknown>).trustProxy = ["127.0.0.1"];
      (config.server as Record<string, unknown>).maxConnectionsPerAddress = 1;
    },
    { secrets, env },
  );
}

beforeAll(async () => {
  [fast, routed] = await Promise.all([start({}), start({ GATEWAY_WEBHOOK_FAST_PATH: "off" })]);
  // The fast one says it answers webhooks (the line may follow "listening": wait for it, bounded).
  const on = "webhooks answered by the Node fast path";
  for (let i = 0; i < 500 && !fast.lines.some((line) => line.includes(on)); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(fast.lines.some((line) => line.includes(on))).toBe(true);
  expect(routed.lines.some((line) => line.includes(on))).toBe(false);
});
afterAll(async () => {
  await Promise.all([fast?.kill(), routed?.kill()]);
});

const requestIds: string[] = [];

/** Sends the same delivery to both gateways and expects the same answer; returns it. */
async function expectSame(
  delivery: SignedDelivery,
  extra: Record<string, string>,
  localAddress?: string,
): Promise<RawAnswer> {
  const requestId = `proxied-${crypto.randomUUID()}`;
  requestIds.push(requestId);
  const init = {
    headers: { ...delivery.headers, "x-request-id": requestId, ...extra },
    body: delivery.body,
    localAddress,
  };
  const [a, b] = await Promise.all([
    send(fast.url, "/webhooks/esign", init),
    send(routed.url, "/webhooks/esign", init),
  ]);
  expect(a).toEqual(b);
  return a;
}

/** Holds a webhook of forwarded client `forwardedFor` open on both gateways, counted by the cap. */
async function holdOpen(forwardedFor: string): Promise<StreamedRequest[]> {
  const held = [fast, routed].map((gw) =>
    openStreamedRequest(
      `${gw.url}/webhooks/esign`,
      {
        "x-forwarded-for": forwardedFor,
        "content-type": "application/json",
        // Well-formed (so the guards before the body pass) and wrong: the body is awaited.
        "x-svc-signature": `sha256=${"0".repeat(64)}`,
        "content-length": "100",
        // The server sends 100 Continue in the same turn as it hands the request to its handler,
        // which counts it against the client's cap before anything else.
        expect: "100-continue",
      },
      "127.0.0.1",
    ),
  );
  for (const request of held) {
    request.answer.catch(() => {});
    await request.continued;
  }
  return held;
}

it("accepts a proxied delivery identically, whatever non-address entries the header carries", async () => {
  const answer = await expectSame(await esignDelivery(secrets.esign), {
    "x-forwarded-for": "unknown, 198.51.100.20, 127.0.0.1",
  });
  expect(answer.status).toBe(202);
});

it("refuses a forwarded client over its cap with the same 429 on both paths, and serves another client", async () => {
  const held = await holdOpen("203.0.113.7");
  try {
    const refused = await expectSame(await esignDelivery(secrets.esign), { "x-forwarded-for": "203.0.113.7" });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.code).toBe("rate_limited");
    expect(refused.headers).toContainEqual(["retry-after", "1"]);
    // The client behind a second trusted hop is the right-most untrusted entry: the same client.
    const twoHops = await expectSame(await esignDelivery(secrets.esign), {
      "x-forwarded-for": "203.0.113.7, 127.0.0.1",
    });
    expect(twoHops.status).toBe(429);
    // Another forwarded client is its own address.
    const other = await expectSame(await esignDelivery(secrets.esign), { "x-forwarded-for": "203.0.113.8" });
    expect(other.status).toBe(202);
    // A peer that is not the trusted proxy is the client itself: its header names nobody.
    const direct = await expectSame(
      await esignDelivery(secrets.esign),
      { "x-forwarded-for": "203.0.113.7" },
      "127.0.0.2",
    );
    expect(direct.status).toBe(202);
  } finally {
    for (const request of held) request.destroy();
  }
  // Once the held request is gone, its client is served again (the count follows the close).
  let again: RawAnswer | undefined;
  for (let i = 0; i < 200; i++) {
    again = await expectSame(await esignDelivery(secrets.esign), { "x-forwarded-for": "203.0.113.7" });
    if (again.status === 202) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(again?.status).toBe(202);
});

it("logs the same lines for every request of this file", async () => {
  const byRequest = (gw: GatewayProcess) => {
    const byId = new Map<string, Record<string, unknown>[]>();
    for (const line of gw.lines) {
      if (!line.startsWith("{")) continue;
      const { time, ts, ...rest } = JSON.parse(line) as Record<string, unknown>;
      if (typeof rest.requestId !== "string" || !requestIds.includes(rest.requestId)) continue;
      byId.set(rest.requestId, [...(byId.get(rest.requestId) ?? []), rest]);
    }
    return byId;
  };
  const last = requestIds[requestIds.length - 1] as string;
  for (let i = 0; i < 500 && ![fast, routed].every((gw) => byRequest(gw).has(last)); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const fastLines = byRequest(fast);
  expect(fastLines.size).toBeGreaterThan(0);
  expect(fastLines).toEqual(byRequest(routed));
});
