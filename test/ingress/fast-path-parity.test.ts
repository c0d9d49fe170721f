/**
 * The Node webhook fast path (adapters/node/webhook-fast-path.ts) answers exactly as the h3 route:
 * two real gateway processes with the same secrets and configuration, one with
 * `GATEWAY_WEBHOOK_FAST_PATH=off`, get the same requests as raw HTTP/1.1 and must give the same
 * status, header names, order and values (but `date`; an error answer's framing differs: h3 sends
 * it chunked, the fast path with its length), body, log lines and recorded event. Covers the
 * accepted, duplicate, refused-before-the-body, bad-signature, stale, unknown-source, too-large,
 * bad-body, query-string and traceparent cases.
 */
import { request } from "node:http";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { utf8 } from "../../src/crypto/crypto-port.ts";
import { type GatewayProcess, makeSecrets } from "../helpers/gateway-process.ts";
import {
  adminGet,
  esignDelivery,
  type SignedDelivery,
  signEsignBytes,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "./gateway-fixtures.ts";

interface RawAnswer {
  status: number;
  /** Lower-cased header pairs in the order sent, `date` left out. */
  headers: [string, string][];
  body: string;
}

/** One request on its own connection; the answer as it came off the wire. */
function send(
  baseUrl: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Uint8Array },
): Promise<RawAnswer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method: init.method ?? "POST", headers: init.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const headers: [string, string][] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = (res.rawHeaders[i] as string).toLowerCase();
            if (name !== "date") headers.push([name, res.rawHeaders[i + 1] as string]);
          }
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(init.body ? Buffer.from(init.body) : undefined);
  });
}

const secrets = makeSecrets();
let fast: GatewayProcess;
let routed: GatewayProcess;

function start(env: Record<string, string>) {
  return startEditedGatewayProcess(
    (config) => {
      // Debug: the fast one says it is on, and no line of a request differs at any level.
      config.log = { level: "debug" };
      config.sources.push({
        id: "tiny",
        service: "esign",
        secrets: ["${TEST_ESIGN_SECRET}"],
        bodyLimitBytes: 1024,
      } as never);
    },
    { secrets, env },
  );
}

const FAST_PATH_ON = "webhooks answered by the Node fast path";

beforeAll(async () => {
  [fast, routed] = await Promise.all([start({}), start({ GATEWAY_WEBHOOK_FAST_PATH: "off" })]);
});

it("runs one gateway with the fast path and one without", async () => {
  // The line may follow "listening" on stdout: wait for it, bounded.
  for (let i = 0; i < 500 && !fast.lines.some((line) => line.includes(FAST_PATH_ON)); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(fast.lines.some((line) => line.includes(FAST_PATH_ON))).toBe(true);
  expect(routed.lines.some((line) => line.includes(FAST_PATH_ON))).toBe(false);
  expect([...fast.lines, ...routed.lines].some((line) => line.includes("fast path not installed"))).toBe(false);
});
afterAll(async () => {
  await Promise.all([fast?.kill(), routed?.kill()]);
});

const requestIds: string[] = [];

/** Each process's log lines of the requests this file sent, by request id, time left out. */
function linesByRequest(gw: GatewayProcess): Map<string, Record<string, unknown>[]> {
  const byId = new Map<string, Record<string, unknown>[]>();
  for (const line of gw.lines) {
    if (!line.startsWith("{")) continue;
    const { time, ts, ...rest } = JSON.parse(line) as Record<string, unknown>;
    if (typeof rest.requestId !== "string" || !requestIds.includes(rest.requestId)) continue;
    byId.set(rest.requestId, [...(byId.get(rest.requestId) ?? []), rest]);
  }
  return byId;
}

function withoutFraming(answer: RawAnswer): RawAnswer {
  const headers = answer.headers.filter(([name]) => name !== "content-length" && name !== "transfer-encoding");
  return { ...answer, headers };
}

/** Sends the same request to both gateways and expects the same answer; returns it. */
async function expectSame(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Uint8Array },
): Promise<RawAnswer> {
  const requestId = `parity-${crypto.randomUUID()}`;
  requestIds.push(requestId);
  const headers = { "x-request-id": requestId, ...init.headers };
  const [a, b] = await Promise.all([
    send(fast.url, path, { ...init, headers }),
    send(routed.url, path, { ...init, headers }),
  ]);
  // One difference of framing, not content: h3 streams an error answer's body (chunked), the
  // fast path sends its length; the bytes are the same.
  expect(withoutFraming(a)).toEqual(withoutFraming(b));
  // (Requests the fast path leaves to h3, e.g. a GET, come back framed alike.)
  if (!isDeepStrictEqual(a, b)) expect(a.headers).toContainEqual(["content-length", String(Buffer.byteLength(a.body))]);
  return a;
}

function deliveryInit(delivery: SignedDelivery, extra: Record<string, string> = {}) {
  return { headers: { ...delivery.headers, ...extra }, body: delivery.body };
}

it("answers an accepted e-sign event, then its duplicate, identically", async () => {
  const delivery = await esignDelivery(secrets.esign, "agreement.signed");
  const first = await expectSame("/webhooks/esign", deliveryInit(delivery));
  expect(first.status).toBe(202);
  expect(first.headers.map(([name]) => name)).toContain("content-length");
  const again = await expectSame("/webhooks/esign", deliveryInit(delivery));
  expect(again.status).toBe(200);
});

it("answers an accepted staffing event and one with a query string identically", async () => {
  expect((await expectSame("/webhooks/staffing", deliveryInit(await staffingDelivery(secrets.staffing)))).status).toBe(
    202,
  );
  const delivery = await esignDelivery(secrets.esign);
  expect((await expectSame("/webhooks/esign?attempt=2", deliveryInit(delivery))).status).toBe(202);
});

it("refuses bad signatures, stale timestamps, unknown sources and bad bodies identically", async () => {
  const delivery = await esignDelivery(secrets.esign);
  const missing = await expectSame("/webhooks/esign", {
    headers: { "content-type": "application/json" },
    body: delivery.body,
  });
  expect(missing.status).toBe(401);
  const forged = await esignDelivery(`${secrets.esign}x`);
  expect((await expectSame("/webhooks/esign", deliveryInit(forged))).status).toBe(401);
  const stale = await staffingDelivery(secrets.staffing, "candidate.accepted", { now: Date.now() - 3_600_000 });
  expect((await expectSame("/webhooks/staffing", deliveryInit(stale))).status).toBe(401);
  expect((await expectSame("/webhooks/nope", deliveryInit(delivery))).status).toBe(404);
  expect((await expectSame("/webhooks/Esign%20x", deliveryInit(delivery))).status).toBe(404);
  const notJson = utf8("not json at all");
  const badBody = await expectSame("/webhooks/esign", {
    headers: await signEsignBytes(secrets.esign, notJson),
    body: notJson,
  });
  expect(badBody.status).toBe(400);
  expect((await expectSame("/webhooks/esign", { method: "GET" })).status).toBe(405);
});

it("refuses a body over the source's limit with 413 and closes, identically", async () => {
  const big = utf8(JSON.stringify({ pad: "x".repeat(4096) }));
  const answer = await expectSame("/webhooks/tiny", { headers: await signEsignBytes(secrets.esign, big), body: big });
  expect(answer.status).toBe(413);
  expect(answer.headers).toContainEqual(["connection", "close"]);
});

it("records the caller's traceparent and the received headers identically", async () => {
  const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const delivery = await esignDelivery(secrets.esign);
  const answer = await expectSame("/webhooks/esign", deliveryInit(delivery, { traceparent, "x-extra": " padded " }));
  const { id } = JSON.parse(answer.body) as { id: string };
  const [a, b] = await Promise.all(
    [fast, routed].map(async (gw) => {
      const { status, body } = await adminGet(gw.url, `/events/${id}`, gw.secrets.adminKey);
      expect(status).toBe(200);
      // The Host header names each process's own port.
      const { host, ...headers } = body.headers as Record<string, string>;
      expect(host).toBe(new URL(gw.url).host);
      return { headers, raw: body.raw_body_base64, text: JSON.stringify(body) };
    }),
  );
  expect(a?.headers).toEqual(b?.headers);
  expect(a?.headers).toMatchObject({ "x-svc-signature": "[redacted]", "x-extra": "padded", traceparent });
  expect(a?.raw).toBe(b?.raw);
  expect(a?.text).toContain(traceparent);
  expect(b?.text).toContain(traceparent);
});

it("logs the same lines for every request of this file", async () => {
  // The log writer keeps order: once the last accepted delivery's line is out, every earlier one is.
  const last = await expectSame("/webhooks/esign", deliveryInit(await esignDelivery(secrets.esign)));
  expect(last.status).toBe(202);
  const lastId = requestIds.at(-1) as string;
  for (let i = 0; i < 500 && ![fast, routed].every((gw) => linesByRequest(gw).has(lastId)); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const fastLines = linesByRequest(fast);
  expect(fastLines.get(lastId)).toHaveLength(1);
  expect(fastLines.size).toBeGreaterThan(8);
  expect(fastLines).toEqual(linesByRequest(routed));
});
