/**
 * Who may call what through a real gateway process: API-key and JWT clients, proxy scopes
 * (upstream, methods, path globs) answering 403 in the envelope, CORS per client (preflight with
 * the allowed methods and headers; unknown origins 403), paths an upstream could decode
 * differently refused with 400, unknown upstreams 404, and an upstream without credentials 503.
 * Denied calls never reach the upstream.
 */
import { request as httpRequest } from "node:http";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type EsignServer,
  type StaffingServer,
  startEsignEmulator,
  startStaffingEmulator,
} from "../helpers/emulators.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { hashKey, newKey, proxyConfig, proxyEnv } from "./proxy-fixtures.ts";

const APP_ORIGIN = "https://app.example.com";
const JWT_SECRET = "jwt-secret-for-tests-0123456789abcdef";
const appKey = newKey("app");
const readerKey = newKey("reader");

let esign: EsignServer;
let staffing: StaffingServer;
let gateway: GatewayProcess;
let agreementId: string;

beforeAll(async () => {
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  staffing = await startStaffingEmulator({ limitPerMinute: 100_000 });
  const options = {
    esign,
    staffing,
    auth: { jwt: { hs256Secret: JWT_SECRET } },
    clients: [
      {
        id: "app",
        apiKeyHashes: [hashKey(appKey)],
        allowedOrigins: [APP_ORIGIN],
        scopes: {
          proxy: [
            { upstream: "esign", methods: ["GET", "POST"], paths: ["/agreements/**"] },
            { upstream: "staffing", methods: ["GET", "POST"], paths: ["/staffing-requests/**"] },
          ],
        },
      },
      {
        id: "reader",
        apiKeyHashes: [hashKey(readerKey)],
        scopes: { proxy: [{ upstream: "esign", methods: ["GET"], paths: ["/agreements", "/agreements/*"] }] },
      },
      { id: "jwt-client", scopes: { proxy: [{ upstream: "*" }] } },
    ],
  };
  const config = proxyConfig(options);
  (config.upstreams as Record<string, unknown>[]).push({ id: "staffing-unset", service: "staffing" });
  gateway = await startGatewayProcess({ config, env: proxyEnv(options) });
  agreementId = await esign.createAgreement();
});

afterAll(async () => {
  await gateway?.kill();
  await esign?.close();
  await staffing?.close();
});

function call(path: string, key: string | undefined, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  return fetch(`${gateway.url}${path}`, { ...init, headers });
}

/** Sends a path byte for byte (fetch would normalize dot segments). */
function rawGet(path: string, key: string): Promise<{ status: number; body: string }> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("authentication", () => {
  test.each([
    ["no credentials", undefined, "an API key or token is required"],
    ["an unknown API key", "not-a-key", "not valid"],
  ])("%s: 401 unauthorized with WWW-Authenticate", async (_, key, message) => {
    const answer = await call(`/api/esign/agreements/${agreementId}`, key);
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const body = await answer.json();
    expect(body.error.code).toBe("unauthorized");
    expect(body.error.message).toContain(message);
  });

  test("a JWT (HS256) whose sub names a client is accepted; an expired one is not", async () => {
    const secret = new TextEncoder().encode(JWT_SECRET);
    const now = Math.floor(Date.now() / 1000);
    const valid = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("jwt-client")
      .setExpirationTime(now + 300)
      .sign(secret);
    expect((await call(`/api/esign/agreements/${agreementId}`, valid)).status).toBe(200);
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("jwt-client")
      .setExpirationTime(now - 300)
      .sign(secret);
    const answer = await call(`/api/esign/agreements/${agreementId}`, expired);
    expect(answer.status).toBe(401);
    expect((await answer.json()).error.message).toContain("expired");
  });
});

describe("proxy scopes", () => {
  test.each([
    ["GET", "/api/esign/agreements", 200],
    ["GET", "/api/esign/agreements/{id}", 200],
    ["GET", "/api/esign/agreements/{id}/download", 403],
    ["GET", "/api/esign/agreements/{id}/events", 403],
    ["POST", "/api/esign/agreements", 403],
    ["DELETE", "/api/esign/agreements/{id}", 403],
    ["GET", "/api/staffing/staffing-requests/x", 403],
  ])("reader: %s %s answers %i", async (method, template, status) => {
    const path = template.replace("{id}", agreementId);
    const before = esign.seen.length + staffing.seen.length;
    const answer = await call(path, readerKey, { method });
    expect(answer.status).toBe(status);
    if (status === 403) {
      expect(await answer.json()).toMatchObject({
        error: { code: "forbidden", details: { reason: "scope", method } },
      });
      expect(esign.seen.length + staffing.seen.length).toBe(before);
    }
  });

  test("an unknown upstream answers 404 in the envelope", async () => {
    const answer = await call("/api/nope/agreements", appKey);
    expect(answer.status).toBe(404);
    expect((await answer.json()).error.code).toBe("not_found");
  });

  test("dot segments are resolved before the scope check: /agreements/%2e%2e/clients is checked as /clients", async () => {
    const before = esign.seen.length;
    const answer = await rawGet("/api/esign/agreements/%2e%2e/clients", appKey);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.details.reason).toBe("scope");
    expect(esign.seen.length).toBe(before);
  });

  test.each(["/api/esign/agreements/..%2Fclients", "/api/esign/agreements/a%5C..%5Cclients"])(
    "the path %s is refused with 400 before reaching the upstream",
    async (path) => {
      const before = esign.seen.length;
      const answer = await rawGet(path, appKey);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error.code).toBe("invalid_request");
      expect(esign.seen.length).toBe(before);
    },
  );

  test("an upstream without credentials answers 503 upstream_unavailable (not_configured) and was warned about", async () => {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("jwt-client")
      .setExpirationTime(Math.floor(Date.now() / 1000) + 300)
      .sign(new TextEncoder().encode(JWT_SECRET));
    const answer = await call("/api/staffing-unset/staffing-requests", token);
    expect(answer.status).toBe(503);
    expect((await answer.json()).error).toMatchObject({
      code: "upstream_unavailable",
      details: { upstream: "staffing-unset", reason: "not_configured", missing: ["baseUrl", "apiKey"] },
    });
    const warning = gateway.lines.find((line) => line.includes("upstream not configured"));
    expect(warning && JSON.parse(warning)).toMatchObject({ level: "warn", upstream: "staffing-unset" });
  });
});

describe("CORS", () => {
  const preflight = (origin: string, method: string, path = "/api/esign/agreements") =>
    fetch(`${gateway.url}${path}`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": method,
        "access-control-request-headers": "authorization, content-type, idempotency-key",
      },
    });

  test("a preflight from an allowed origin gets the client's methods and the documented headers", async () => {
    const answer = await preflight(APP_ORIGIN, "POST");
    expect(answer.status).toBe(204);
    expect(answer.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(answer.headers.get("access-control-allow-methods")).toBe("GET, POST");
    expect(answer.headers.get("access-control-allow-headers")).toBe(
      "Authorization, Content-Type, Idempotency-Key, X-Request-Id",
    );
    expect(answer.headers.get("vary")).toContain("Origin");
  });

  test.each([
    ["an unknown origin", "https://evil.example", "GET", "origin_not_allowed"],
    ["a method no client of the origin may use", APP_ORIGIN, "DELETE", "method_not_allowed"],
  ])("a preflight from %s is denied with 403 in the envelope", async (_, origin, method, reason) => {
    const before = esign.seen.length;
    const answer = await preflight(origin, method);
    expect(answer.status).toBe(403);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    expect(await answer.json()).toMatchObject({ error: { code: "forbidden", details: { reason } } });
    expect(esign.seen.length).toBe(before);
  });

  test("a request from an allowed origin gets CORS headers, never the upstream's own", async () => {
    const path = `/agreements/${agreementId}`;
    esign.inject({
      method: "GET",
      path,
      fault: { status: 200, body: { id: agreementId }, headers: { "access-control-allow-origin": "*" } },
    });
    const answer = await call(`/api/esign${path}`, appKey, { headers: { origin: APP_ORIGIN } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(answer.headers.get("access-control-expose-headers")).toContain("X-RateLimit-Remaining");
  });

  test.each([
    ["a client from an origin it does not allow", appKey, "https://evil.example"],
    ["a client that allows no browser origin", readerKey, APP_ORIGIN],
  ])("%s: 403 before reaching the upstream", async (_, key, origin) => {
    const before = esign.seen.length;
    const answer = await call(`/api/esign/agreements/${agreementId}`, key, { headers: { origin } });
    expect(answer.status).toBe(403);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    expect(await answer.json()).toMatchObject({
      error: { code: "forbidden", details: { reason: "origin_not_allowed" } },
    });
    expect(esign.seen.length).toBe(before);
  });

  test("OPTIONS without CORS headers is an ordinary proxied call (scope-checked)", async () => {
    const answer = await call("/api/esign/agreements", appKey, { method: "OPTIONS" });
    expect(answer.status).toBe(403);
    expect((await answer.json()).error.details.reason).toBe("scope");
  });
});
