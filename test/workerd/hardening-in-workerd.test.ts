/**
 * The hardening of docs/security-and-deployment.md#what-protects-what that applies on Workers,
 * checked through the Worker entry
 * inside workerd: proxy paths an upstream would resolve elsewhere, the client JWT lifetime rule,
 * CORS without a Host-based exemption, `/metrics` behind credentials, and the per-address limiter
 * of failed webhook verifications, keyed by `CF-Connecting-IP` (the client address Cloudflare
 * sets, which h3's Workers adapter reports as the request's address), and the isolate's budget of
 * webhook body bytes in flight.
 */
import { env, exports } from "cloudflare:workers";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, BASE, esignBody, postWebhook } from "./gateway-client.ts";
import { ESIGN_SECRET, esignSignature, utf8 } from "./reference-signatures.ts";

const APP_KEY = "workerd_test_app_key_0123456789";

const proxied = (path: string, headers: Record<string, string>) =>
  exports.default.fetch(new Request(`${BASE}${path}`, { headers }));

const errorCode = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code;

describe("proxy paths", () => {
  it.each([
    "/api/esign/agreements/%2e%2e;/clients",
    "/api/esign/agreements/%252e%252e/clients",
    "/api/esign/agreements/%2e%2e%3B/clients",
    "/api/esign/agreements;jsessionid=1",
  ])("%s answers 400 invalid_request", async (path) => {
    const answer = await proxied(path, { authorization: `Bearer ${APP_KEY}` });
    expect(answer.status).toBe(400);
    expect(await errorCode(answer)).toBe("invalid_request");
  });

  it("passes a plain path in scope", async () => {
    expect((await proxied("/api/esign/agreements", { authorization: `Bearer ${APP_KEY}` })).status).toBe(200);
  });
});

describe("client JWT lifetime", () => {
  const secret = new TextEncoder().encode(env.WORKERD_TEST_JWT_SECRET);
  const now = () => Math.floor(Date.now() / 1000);
  const sign = (claims: { exp?: number; iat?: number }) => {
    let jwt = new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("app");
    if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(secret);
  };

  it.each([
    ["without exp", () => sign({})],
    ["with exp beyond the maximum lifetime", () => sign({ exp: now() + 7200 })],
    ["with iat to exp longer than the maximum", () => sign({ iat: now() - 3000, exp: now() + 1000 })],
  ])("refuses a token %s with 401", async (_, make) => {
    const answer = await proxied("/api/esign/agreements", { authorization: `Bearer ${await make()}` });
    expect(answer.status).toBe(401);
  });

  it("accepts a token whose exp is within the maximum", async () => {
    const token = await sign({ iat: now(), exp: now() + 600 });
    expect((await proxied("/api/esign/agreements", { authorization: `Bearer ${token}` })).status).toBe(200);
  });
});

describe("CORS", () => {
  it("refuses an Origin equal to the request's own host unless the client allows it", async () => {
    const answer = await proxied("/api/esign/agreements", { authorization: `Bearer ${APP_KEY}`, origin: BASE });
    expect(answer.status).toBe(403);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("gives an allowed origin its CORS headers", async () => {
    const answer = await proxied("/api/esign/agreements", {
      authorization: `Bearer ${APP_KEY}`,
      origin: "https://app.example.com",
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
  });
});

describe("/metrics", () => {
  it("answers 401 without a credential and the counters to the admin key", async () => {
    const anonymous = await exports.default.fetch(`${BASE}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("Bearer");
    const operator = await exports.default.fetch(`${BASE}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(operator.status).toBe(200);
    expect(await operator.text()).toContain("# TYPE");
  });
});

describe("failed-verification budget", () => {
  it("never refuses an address over the limit: forged ones still get 401, its signed delivery 202", async () => {
    const forged = (address: string) => {
      const { body } = esignBody("forged");
      // Well-formed but wrong: passes the precheck, fails verification.
      return postWebhook("esign", body, { "x-svc-signature": `sha256=${"a".repeat(64)}`, "cf-connecting-ip": address });
    };
    const statuses: number[] = [];
    // Default limit: more than 20 failures within 60 s puts the address on the read budget.
    for (let i = 0; i < 30; i++) statuses.push((await forged("203.0.113.7")).status);
    expect(statuses).toEqual(Array(30).fill(401));
    const { body } = esignBody("signed");
    const signed = await postWebhook("esign", body, {
      "x-svc-signature": await esignSignature(ESIGN_SECRET, body),
      "cf-connecting-ip": "203.0.113.7",
    });
    expect(signed.status).toBe(202);
  });
});

describe("webhook bodies in flight", () => {
  /** The gauge of body bytes in flight (admin key). */
  const inFlight = async () => {
    const text = await (
      await exports.default.fetch(`${BASE}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    ).text();
    return Number(/^gateway_webhook_body_bytes_in_flight (\d+)$/m.exec(text)?.[1]);
  };
  const signedBody = (prefix: string, padding: number) => {
    const eventId = `${prefix}-${crypto.randomUUID()}`;
    const text = JSON.stringify({
      event: "agreement.completed",
      event_id: eventId,
      agreement_id: "ag-w",
      pad: "x".repeat(padding),
    });
    return { eventId, text, bytes: utf8(text) };
  };

  it("a body past the isolate's budget (1.5 MiB here) is refused 503 overloaded while another is held; the held one is recorded", async () => {
    // A body of about 1 MB streams in and stalls 10 bytes short of its end.
    const held = signedBody("held", 1_000_000);
    let finish!: () => void;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(held.bytes.subarray(0, held.bytes.length - 10));
        finish = () => {
          controller.enqueue(held.bytes.subarray(held.bytes.length - 10));
          controller.close();
        };
      },
    });
    const heldAnswer = exports.default.fetch(`${BASE}/webhooks/esign`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-svc-signature": await esignSignature(ESIGN_SECRET, held.text) },
      body: stream,
    });
    let bytes = 0;
    for (let i = 0; i < 2_000 && bytes < held.bytes.length - 10; i++) {
      bytes = await inFlight();
      if (bytes < held.bytes.length - 10) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(bytes).toBe(held.bytes.length - 10);

    // A second body of 700 KB does not fit beside it.
    const refused = signedBody("refused", 700_000);
    const answer = await postWebhook("esign", refused.text, {
      "x-svc-signature": await esignSignature(ESIGN_SECRET, refused.text),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("overloaded");
    expect(await inFlight()).toBe(held.bytes.length - 10);

    // The held body ends: recorded; everything is given back; the refused one's retry is recorded.
    finish();
    expect((await heldAnswer).status).toBe(202);
    expect(await inFlight()).toBe(0);
    const retried = await postWebhook("esign", refused.text, {
      "x-svc-signature": await esignSignature(ESIGN_SECRET, refused.text),
    });
    expect(retried.status).toBe(202);
  });
});
