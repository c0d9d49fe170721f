/**
 * The delivery matrix (issue 18) through a real gateway process, once per store (SQLite, Redis):
 * both services × every destination type and mode (http CloudEvents, http relay, queue on Redis
 * Streams, e-mail over SMTP, the live stream, `gateway listen` in both formats) × three bodies
 * (ASCII JSON; UTF-8 with non-ASCII text and spacing a re-serialiser would change; bytes that are
 * not valid UTF-8 inside a JSON string). One process per store holds every destination at once.
 * Relay must deliver the exact bytes and the upstream's headers, signed per Standard Webhooks;
 * the event log and a replay must give the exact bytes back too.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Redis } from "ioredis";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { readStreamFields } from "../../src/delivery/queue/build-stream-entry.ts";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { verifyEsignSignature } from "../../src/services/esign/verify-esign-signature.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";
import { verifyStaffingSignature } from "../../src/services/staffing/verify-staffing-signature.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import { adminGet, adminKeyHash, signEsignBytes, signStaffingBytes } from "../helpers/signed-requests.ts";
import { type SmtpTestServer, startSmtpServer } from "../helpers/smtp-server.ts";
import { type ListenerProcess, startListener, tempDir } from "../listen/listen-fixtures.ts";
import { openReadyWs, type WsClient } from "../stream/stream-fixtures.ts";
import { makeWhsecSecret } from "./helpers/in-process-gateway.ts";
import { waitFor } from "./helpers/webhook-receiver.ts";

const crypto = createWebCrypto();
const utf8 = (text: string) => new TextEncoder().encode(text);
const lossy = new TextDecoder();

interface RawRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** An HTTP consumer that keeps the exact bytes of every request, by path. */
async function startRawReceiver(): Promise<{ url: string; requests: RawRequest[]; close(): Promise<void> }> {
  const requests: RawRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({
        path: req.url ?? "",
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks),
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type BodyKind = "ascii" | "utf8-odd-spacing" | "invalid-utf8";
const BODY_KINDS: BodyKind[] = ["ascii", "utf8-odd-spacing", "invalid-utf8"];

/** The exact bytes of one body kind around a service's sample body. */
function bodyBytes(kind: BodyKind, sample: Record<string, unknown>): Uint8Array {
  if (kind === "ascii") return utf8(JSON.stringify({ ...sample, note: "plain ascii" }));
  if (kind === "utf8-odd-spacing") {
    // Tabs, a space before each colon, CRLF after commas and a trailing newline: any
    // re-serialisation changes these bytes (and breaks the upstream's signature).
    const text = JSON.stringify({ ...sample, note: "Åsa Öberg — 東京 🎉 naïve\u00a0café" }, null, "\t")
      .replace(/":/g, '" :')
      .replace(/,\n/g, " ,\r\n");
    return utf8(`${text}\n `);
  }
  // Not UTF-8: a lone 0xff, a truncated sequence and an encoded surrogate inside a JSON string.
  const head = utf8('{"note":"');
  const bad = Uint8Array.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]);
  const tail = utf8(`",${JSON.stringify(sample).slice(1)}`);
  return Uint8Array.from([...head, ...bad, ...tail]);
}

interface Sent {
  service: "esign" | "staffing";
  kind: BodyKind;
  bytes: Uint8Array;
  headers: Record<string, string>;
  id: string;
}

async function sendAll(gateway: GatewayProcess): Promise<Sent[]> {
  const sent: Sent[] = [];
  for (const service of ["esign", "staffing"] as const) {
    for (const kind of BODY_KINDS) {
      const unique = globalThis.crypto.randomUUID();
      const sample =
        service === "esign"
          ? buildEsignBody("agreement.completed", { uniqueId: unique })
          : buildStaffingBody("candidate.accepted", { uniqueId: unique });
      const bytes = bodyBytes(kind, sample);
      const headers =
        service === "esign"
          ? { ...(await signEsignBytes(gateway.secrets.esign, bytes)), "x-svc-event": "agreement.completed" }
          : { ...(await signStaffingBytes(gateway.secrets.staffing, bytes)), "x-svc-delivery-id": `del-${unique}` };
      const response = await fetch(`${gateway.url}/webhooks/${service}`, {
        method: "POST",
        headers,
        body: bytes as Uint8Array<ArrayBuffer>,
      });
      const answer = (await response.json()) as { id: string };
      expect(response.status, `${service} ${kind}: ${JSON.stringify(answer)}`).toBe(202);
      sent.push({ service, kind, bytes, headers, id: answer.id });
    }
  }
  return sent;
}

/** Standard Webhooks signature over the exact bytes (the library decodes a Buffer as UTF-8). */
function standardSignature(secret: string, id: string, timestamp: string, body: Uint8Array): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
  return `v1,${mac}`;
}

function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

async function verifyInUpstreamScheme(sent: Sent, request: RawRequest, secret: string) {
  if (sent.service === "esign") {
    return verifyEsignSignature(
      { signature: request.headers["x-svc-signature"] ?? null, rawBody: request.body, secrets: [secret] },
      crypto,
    );
  }
  return verifyStaffingSignature(
    {
      signature: request.headers["x-svc-signature"] ?? null,
      timestamp: request.headers["x-svc-timestamp"] ?? null,
      rawBody: request.body,
      secrets: [secret],
      toleranceSeconds: 300,
      nowSeconds: Math.floor(Date.now() / 1000),
    },
    crypto,
  );
}

const STORES = ["sqlite", "redis"] as const;

describe.each(STORES)("delivery matrix on the %s store", (storeDriver) => {
  let redis: RedisServer;
  let smtp: SmtpTestServer;
  let receiver: Awaited<ReturnType<typeof startRawReceiver>>;
  let gateway: GatewayProcess;
  let ws: WsClient;
  let listeners: { cloudevents: ListenerProcess; upstream: ListenerProcess };
  let reader: Redis;
  let sent: Sent[];
  const whsec = makeWhsecSecret();
  const stream = `matrix:${storeDriver}`;
  const byPath = (path: string, id: string, header = "webhook-id") =>
    receiver.requests.find((r) => r.path === path && r.headers[header] === id);

  beforeAll(async () => {
    [redis, smtp, receiver] = await Promise.all([startRedisServer(), startSmtpServer(), startRawReceiver()]);
    reader = new Redis(redis.url).on("error", () => undefined);
    const secrets = makeSecrets();
    const dataDir = await tempDir("gw-matrix-");
    const hash = adminKeyHash(secrets.adminKey);
    const config = defaultTestConfig(dataDir, hash) as Record<string, unknown>;
    config.store =
      storeDriver === "sqlite"
        ? { driver: "sqlite", dir: dataDir }
        : { driver: "redis", url: "${TEST_REDIS_URL}", prefix: `matrix-${Date.now()}` };
    const http = { type: "http", secrets: ["${TEST_WHSEC}"], allowCidrs: ["127.0.0.1/32"] };
    config.destinations = [
      { ...http, id: "cloudevents", url: `${receiver.url}/cloudevents` },
      { ...http, id: "relay", mode: "relay", url: `${receiver.url}/relay` },
      { id: "queue", type: "queue", url: "${TEST_REDIS_URL}", stream, maxLen: 1_000 },
      {
        id: "mail",
        type: "email",
        host: "127.0.0.1",
        allowPrivateNetworks: true,
        port: smtp.port,
        from: "gw@example.com",
        to: ["ops@example.com"],
      },
      { id: "live", type: "stream" },
    ];
    config.routes = [{ destinations: ["cloudevents", "relay", "queue", "mail", "live"] }];
    config.clients = [{ id: "admin", apiKeyHashes: [hash], scopes: { stream: {} } }];
    gateway = await startGatewayProcess({
      config,
      dataDir,
      secrets,
      env: { TEST_REDIS_URL: redis.url, TEST_WHSEC: whsec },
    });
    ws = await openReadyWs(`${gateway.url.replace(/^http/, "ws")}/ws`, { authorization: `Bearer ${secrets.adminKey}` });
    const listen = async (format: string) =>
      startListener([
        gateway.url,
        "--forward-to",
        `${receiver.url}/listen-${format}`,
        "--key",
        secrets.adminKey,
        "--state",
        join(await tempDir("gw-matrix-listen-"), "state.json"),
        "--format",
        format,
      ]);
    listeners = { cloudevents: await listen("cloudevents"), upstream: await listen("upstream") };
    sent = await sendAll(gateway);
  }, 60_000);

  afterAll(async () => {
    ws?.ws.close();
    await listeners?.cloudevents.kill();
    await listeners?.upstream.kill();
    await gateway?.kill();
    reader?.disconnect();
    await Promise.all([redis?.stop(), smtp?.close(), receiver?.close()]);
  });

  const cells = (["esign", "staffing"] as const).flatMap((s) => BODY_KINDS.map((k) => [s, k] as const));

  it.each(cells)("%s × %s: http CloudEvents, signed, data as parsed", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    await waitFor("the CloudEvent", () => byPath("/cloudevents", one.id) !== undefined);
    const request = byPath("/cloudevents", one.id) as RawRequest;
    const event = new Webhook(whsec).verify(request.body.toString("utf8"), request.headers) as Record<string, unknown>;
    expect(event).toMatchObject({ id: one.id, source: `/webhooks/${service}`, specversion: "1.0" });
    expect(event.data).toEqual(JSON.parse(lossy.decode(one.bytes)));
  });

  it.each(cells)("%s × %s: http relay, the exact bytes and the upstream's headers, signed", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    await waitFor("the relayed delivery", () => byPath("/relay", one.id) !== undefined);
    const request = byPath("/relay", one.id) as RawRequest;
    expect(Buffer.compare(request.body, Buffer.from(one.bytes))).toBe(0);
    for (const name of ["content-type", "x-svc-event", "x-svc-delivery-id", "x-svc-timestamp"]) {
      if (one.headers[name] !== undefined) expect(request.headers[name]).toBe(one.headers[name]);
    }
    // Credentials were redacted when recorded and never travel on.
    expect(request.headers["x-svc-signature"]).toBeUndefined();
    const timestamp = request.headers["webhook-timestamp"] as string;
    expect(request.headers["webhook-signature"]).toBe(standardSignature(whsec, one.id, timestamp, one.bytes));
    if (isValidUtf8(one.bytes)) {
      // The reference library reads the payload as text, which only round-trips valid UTF-8.
      expect(() => new Webhook(whsec).verify(request.body.toString("utf8"), request.headers)).not.toThrow();
    }
  });

  it.each(cells)("%s × %s: queue entry on Redis Streams", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    let entry: Record<string, string> | undefined;
    await waitFor("the stream entry", async () => {
      const entries = (await reader.xrange(stream, "-", "+")) as [string, string[]][];
      entry = entries.map(([, flat]) => readStreamFields(flat)).find((fields) => fields.id === one.id);
      return entry !== undefined;
    });
    expect(entry).toMatchObject({ id: one.id, source: `/webhooks/${service}` });
    expect(JSON.parse(entry?.payload as string).data).toEqual(JSON.parse(lossy.decode(one.bytes)));
  });

  it.each(cells)("%s × %s: e-mail over SMTP", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    await waitFor("the mail", () => smtp.messages.some((m) => m.parsed.messageId === `<${one.id}.mail@gateway>`));
    const mail = smtp.messages.find((m) => m.parsed.messageId === `<${one.id}.mail@gateway>`);
    expect(mail?.envelope.to).toContain("ops@example.com");
  });

  it.each(cells)("%s × %s: live stream", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    const frame = await ws.log.waitFor((f) => f.type === "event" && f.event.id === one.id, `event ${one.id}`);
    expect(frame.event.data).toEqual(JSON.parse(lossy.decode(one.bytes)));
  });

  it.each(cells)("%s × %s: gateway listen --format cloudevents", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    await waitFor("the listened CloudEvent", () => byPath("/listen-cloudevents", one.id) !== undefined);
    const request = byPath("/listen-cloudevents", one.id) as RawRequest;
    const event = new Webhook(listeners.cloudevents.secret).verify(request.body.toString("utf8"), request.headers) as {
      data: unknown;
    };
    expect(event.data).toEqual(JSON.parse(lossy.decode(one.bytes)));
  });

  it.each(cells)("%s × %s: gateway listen --format upstream, exact bytes re-signed", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    const find = () =>
      receiver.requests.find(
        (r) => r.path === "/listen-upstream" && Buffer.compare(r.body, Buffer.from(one.bytes)) === 0,
      );
    await waitFor("the listened upstream delivery", () => find() !== undefined);
    expect(await verifyInUpstreamScheme(one, find() as RawRequest, listeners.upstream.secret)).toEqual({ ok: true });
  });

  it.each(cells)("%s × %s: event log gives the exact bytes back", async (service, kind) => {
    const one = sent.find((s) => s.service === service && s.kind === kind) as Sent;
    const { status, body } = await adminGet(gateway.url, `/events/${one.id}`, gateway.secrets.adminKey);
    expect(status).toBe(200);
    expect(Buffer.from(body.raw_body_base64, "base64").equals(Buffer.from(one.bytes))).toBe(true);
  });

  it("a replay to the relay destination delivers the exact bytes again", async () => {
    for (const one of sent.filter((s) => s.kind !== "ascii")) {
      await waitFor("the first relay", () => byPath("/relay", one.id) !== undefined);
      const before = receiver.requests.filter((r) => r.path === "/relay" && r.headers["webhook-id"] === one.id).length;
      const replay = await fetch(`${gateway.url}/events/${one.id}/replay`, {
        method: "POST",
        headers: { authorization: `Bearer ${gateway.secrets.adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ destination: "relay" }),
      });
      const replayed = await replay.text();
      expect(replay.status, replayed).toBeLessThan(300);
      const again = () => receiver.requests.filter((r) => r.path === "/relay" && r.headers["webhook-id"] === one.id);
      await waitFor(`the replayed relay (${replayed})`, () => again().length > before);
      expect(Buffer.compare(again().at(-1)?.body as Buffer, Buffer.from(one.bytes))).toBe(0);
    }
  });
});
