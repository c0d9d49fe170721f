/**
 * The `http` sink against real receivers on loopback: the shared sink conformance suite,
 * Standard Webhooks signatures verified with the `standardwebhooks` library (several secrets
 * during rotation), relay mode, no redirects, the timeout, and the SSRF guard refusing real
 * connects (loopback names, IP spellings, a resolver handing out private addresses).
 */

import { createServer as createHttpServer } from "node:http";
import { Webhook } from "standardwebhooks";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { httpWebhookSink, type ResolveAll } from "../../../adapters/sink/http.ts";
import { HttpDestinationSchema } from "../../../src/delivery/http/http-destination-schema.ts";
import type { Sink } from "../../../src/delivery/sink-contract.ts";
import { encodeRawBody } from "../../../src/encoding/raw-body-text.ts";
import { makeTestRecord, testSinkDriver } from "../../conformance/sink-conformance.ts";
import { closedPort, httpSinkFixture } from "../../delivery/helpers/http-sink-fixture.ts";
import { makeWhsecSecret } from "../../delivery/helpers/in-process-gateway.ts";

const { secret, receiver, destination, keep } = httpSinkFixture();
const signal = () => new AbortController().signal;

function sink(input: Record<string, unknown>, resolve?: ResolveAll): Sink {
  return keep(httpWebhookSink(destination(input), resolve ? { resolve } : undefined));
}

const shared = await receiver();
const unreachable = `http://127.0.0.1:${await closedPort()}/hook`;

testSinkDriver(
  "http (signed webhook)",
  (kind) =>
    httpWebhookSink(
      destination({ url: kind === "reachable" ? shared.url : unreachable, allowPrivateNetworks: true }),
      undefined,
    ),
  async (eventId) =>
    shared.requests
      .filter((r) => r.headers["webhook-id"] === eventId)
      .map((r) => ({ eventId, type: (JSON.parse(r.body) as { type: string }).type })),
);

describe("signed requests", () => {
  it("signs the CloudEvent with every active secret; each verifies with standardwebhooks", async () => {
    const target = await receiver();
    const next = makeWhsecSecret();
    const record = makeTestRecord({ type: "agreement.completed" });
    const result = await sink({ url: target.url, secrets: [secret, next], allowCidrs: ["127.0.0.1/32"] }).deliver(
      record,
      signal(),
    );
    expect(result).toEqual({ ok: true, status: 200 });
    const [request] = target.requests;
    expect(request?.method).toBe("POST");
    expect(request?.headers).toMatchObject({
      "content-type": "application/cloudevents+json; charset=utf-8",
      "webhook-id": record.id,
    });
    expect(Math.abs(Number(request?.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    expect(request?.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    for (const key of [secret, next]) {
      expect(new Webhook(key).verify(request?.body ?? "", request?.headers ?? {})).toEqual(record.event);
    }
    expect(() => new Webhook(makeWhsecSecret()).verify(request?.body ?? "", request?.headers ?? {})).toThrow();
  });

  it("relay mode forwards the raw body and upstream headers, minus hop-by-hop and redacted ones", async () => {
    const target = await receiver();
    const record = makeTestRecord();
    record.rawBody = Buffer.from('{"event_id":"e1",  "raw":true}').toString("base64");
    record.headers = {
      "content-type": "application/json",
      "x-svc-event": "agreement.completed",
      "x-svc-signature": "[redacted]",
      connection: "keep-alive, x-hop",
      "x-hop": "1",
      "keep-alive": "timeout=5",
      host: "gateway.example",
      "content-length": "31",
    };
    const result = await sink({ url: target.url, mode: "relay", allowPrivateNetworks: true }).deliver(record, signal());
    expect(result.ok).toBe(true);
    const [request] = target.requests;
    expect(request?.body).toBe('{"event_id":"e1",  "raw":true}');
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "x-svc-event": "agreement.completed",
    });
    for (const name of ["x-svc-signature", "x-hop", "keep-alive"]) expect(request?.headers[name]).toBeUndefined();
    expect(request?.headers.host).toMatch(/^127\.0\.0\.1:/);
    expect(new Webhook(secret).verify(request?.body ?? "", request?.headers ?? {})).toEqual({
      event_id: "e1",
      raw: true,
    });
  });

  it("relay mode reads the body the way the ingress stores it: UTF-8 as text, other bytes as base64", async () => {
    const bodies = [
      Buffer.from('{"note":  "Åsa 東京 🎉" ,\r\n "event_id":"e2"}'),
      Buffer.concat([Buffer.from('{"note":"'), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from('","event_id":"e3"}')]),
    ];
    for (const bytes of bodies) {
      const target = await receiver();
      const record = makeTestRecord();
      const stored = encodeRawBody(bytes);
      record.rawBody = stored.text;
      record.rawBodyEncoding = stored.encoding;
      const result = await sink({ url: target.url, mode: "relay", allowPrivateNetworks: true }).deliver(
        record,
        signal(),
      );
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(Buffer.compare(target.requests[0]?.raw as Buffer, bytes)).toBe(0);
    }
  });

  it("does not follow redirects, classifies 410 and times out", async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver(() => ({ status: 307, headers: { location: elsewhere.url } }));
    const redirect = await sink({ url: redirecting.url, allowPrivateNetworks: true }).deliver(
      makeTestRecord(),
      signal(),
    );
    expect(redirect).toMatchObject({ ok: false, status: 307, error: "HTTP 307 (redirects are not followed)" });
    expect(elsewhere.requests).toHaveLength(0);

    const gone = await receiver(() => ({ status: 410 }));
    const result = await sink({ url: gone.url, allowPrivateNetworks: true }).deliver(makeTestRecord(), signal());
    expect(result).toMatchObject({ ok: false, status: 410, disableDestination: true });

    const hanging = await receiver(() => ({ status: 200, after: new Promise(() => {}) }));
    const slow = await sink({ url: hanging.url, allowPrivateNetworks: true, timeoutSeconds: 0.2 }).deliver(
      makeTestRecord(),
      signal(),
    );
    expect(slow).toMatchObject({ ok: false, error: "timed out (no answer within 200 ms)" });
  });

  it("reads Retry-After, drops answer bodies (however large) and keeps delivering on the same sink", async () => {
    const answers = [
      { status: 503, headers: { "Retry-After": "120" }, size: 10 },
      { status: 200, headers: {}, size: 1 << 20 },
      { status: 204, headers: {}, size: 0 },
    ];
    let n = 0;
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const answer = answers[n++ % answers.length] as (typeof answers)[number];
        res.writeHead(answer.status, answer.headers);
        res.end(Buffer.alloc(answer.size, "x"));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    try {
      const target = sink({ url, allowPrivateNetworks: true });
      const now = Date.now();
      const busy = await target.deliver(makeTestRecord(), signal());
      expect(busy).toMatchObject({ ok: false, status: 503 });
      expect(busy.retryAfterMs).toBeGreaterThanOrEqual(119_000);
      expect(busy.retryAfterMs).toBeLessThanOrEqual(120_000 + (Date.now() - now));
      expect(await target.deliver(makeTestRecord(), signal())).toMatchObject({ ok: true, status: 200 });
      expect(await target.deliver(makeTestRecord(), signal())).toMatchObject({ ok: true, status: 204 });
      expect(n).toBe(3);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("an attempt in flight when its shutdown signal aborts resolves as aborted", async () => {
    const hanging = await receiver(() => ({ status: 200, after: new Promise(() => {}) }));
    const shutdown = new AbortController();
    const target = sink({ url: hanging.url, allowPrivateNetworks: true });
    const attempts = [
      target.deliver(makeTestRecord(), shutdown.signal),
      target.deliver(makeTestRecord(), shutdown.signal),
    ];
    await waitUntil(() => hanging.requests.length === 2);
    shutdown.abort(new Error("gateway shutting down"));
    for (const result of await Promise.all(attempts))
      expect(result).toMatchObject({ ok: false, error: "attempt aborted" });
  });
});

async function waitUntil(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe("SSRF guard on real connects", () => {
  it("refuses loopback by name and by every spelling of its address, before sending anything", async () => {
    const target = await receiver();
    const port = new URL(target.url).port;
    for (const url of [
      `http://localhost:${port}/hook`,
      `http://127.0.0.1:${port}/hook`,
      `http://2130706433:${port}/hook`,
      `http://0x7f.1:${port}/hook`,
      `http://0177.0.0.1:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://[::1]:${port}/hook`,
    ]) {
      const result = await sink({ url }).deliver(makeTestRecord(), signal());
      expect(result, url).toMatchObject({ ok: false, permanent: true });
      expect(result.error, url).toMatch(/^refused by the SSRF guard/);
    }
    expect(target.requests).toHaveLength(0);
  });

  it("checks the addresses the resolver returns, so a name pointing inside is refused", async () => {
    const target = await receiver();
    const port = new URL(target.url).port;
    const rebinding: ResolveAll = async () => [{ address: "127.0.0.1", family: 4 }];
    const refused = await sink({ url: `http://hooks.example.com:${port}/hook` }, rebinding).deliver(
      makeTestRecord(),
      signal(),
    );
    expect(refused).toMatchObject({ ok: false, permanent: true });
    expect(refused.error).toContain("loopback");
    expect(target.requests).toHaveLength(0);

    // Mixed answers: refused addresses are dropped, allowed ones are used.
    const mixed: ResolveAll = async () => [
      { address: "169.254.169.254", family: 4 },
      { address: "127.0.0.1", family: 4 },
    ];
    const allowed = await sink(
      { url: `http://hooks.example.com:${port}/hook`, allowCidrs: ["127.0.0.1/32"] },
      mixed,
    ).deliver(makeTestRecord(), signal());
    expect(allowed).toEqual({ ok: true, status: 200 });
    expect(target.requests).toHaveLength(1);
    expect(target.requests[0]?.headers.host).toBe(`hooks.example.com:${port}`);
  });

  it("refuses configuration that is not a safe URL or secret", () => {
    const bad = [
      { url: "ftp://example.com/x" },
      { url: "https://user:pw@example.com/x" },
      { url: "https://example.com/x", secrets: ["not-a-whsec"] },
      { url: "https://example.com/x", secrets: [`whsec_${Buffer.alloc(8).toString("base64")}`] },
      { url: "https://example.com/x", headers: { "webhook-id": "x" } },
      { url: "https://example.com/x", allowCidrs: ["localhost/8"] },
    ];
    for (const input of bad) {
      expect(v.safeParse(HttpDestinationSchema, { id: "x", type: "http", secrets: [secret], ...input }).success).toBe(
        false,
      );
    }
  });
});
