/**
 * Issue 12 rows 4, 5, 10 and 11 against a real gateway process: proxy paths with `;` or dot
 * segments in any spelling are refused with 400 and never reach the upstream; client JWTs need
 * `exp` and a lifetime within `auth.jwt.maxLifetimeSeconds`; a `Host` equal to the `Origin` earns
 * no CORS exemption; a header the client names in `Connection` is not forwarded; the bearer
 * scheme is case-insensitive on admin routes; `scopes.events` opens the event log and replay.
 */
import { request as httpRequest } from "node:http";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type EsignServer, startEsignEmulator } from "../helpers/emulators.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { hashKey, newKey, proxyConfig, proxyEnv } from "../proxy/proxy-fixtures.ts";

const JWT_SECRET = "jwt-secret-for-tests-0123456789abcdef";
const appKey = newKey("app");
const consoleKey = newKey("console");
const adminKey = newKey("admin");
const secret = new TextEncoder().encode(JWT_SECRET);

let esign: EsignServer;
let gateway: GatewayProcess;
let agreementId: string;

beforeAll(async () => {
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  const options = {
    esign,
    auth: { jwt: { hs256Secret: JWT_SECRET, maxLifetimeSeconds: 3600 } },
    clients: [
      {
        id: "app",
        apiKeyHashes: [hashKey(appKey)],
        allowedOrigins: ["https://app.example.com"],
        scopes: { proxy: [{ upstream: "esign", paths: ["/agreements/**"] }] },
      },
      { id: "console", apiKeyHashes: [hashKey(consoleKey)], scopes: { events: true } },
    ],
  };
  const config = { ...proxyConfig(options), admin: { apiKeyHashes: [hashKey(adminKey)] } };
  gateway = await startGatewayProcess({ config, env: proxyEnv(options) });
  agreementId = await esign.createAgreement();
});

afterAll(async () => {
  await gateway?.kill();
  await esign?.close();
});

/** Sends a request byte for byte (fetch would normalize paths and refuse some headers). */
function raw(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("row 4: proxy paths a Tomcat/Spring upstream would resolve elsewhere", () => {
  test.each([
    "/api/esign/agreements/..;/..;/clients",
    "/api/esign/agreements/%2e%2e;/clients",
    "/api/esign/agreements/x;jsessionid=1/..;/clients",
    "/api/esign/agreements/%3b/clients",
    "/api/esign/agreements/%252e%252e/clients",
    "/api/esign/agreements/%EF%BC%8E%EF%BC%8E/clients",
    "/api/esign/agreements/%2e%2e%3B/clients",
  ])("%s answers 400 and never reaches the upstream", async (path) => {
    const before = esign.seen.length;
    const answer = await raw(path, { authorization: `Bearer ${appKey}` });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe("invalid_request");
    expect(esign.seen.length).toBe(before);
  });

  test("a plain path in scope still passes", async () => {
    expect((await raw(`/api/esign/agreements/${agreementId}`, { authorization: `Bearer ${appKey}` })).status).toBe(200);
  });
});

describe("row 5: JWT lifetime", () => {
  const sign = (claims: { exp?: number; iat?: number }) => {
    let jwt = new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("app");
    if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(secret);
  };
  const now = () => Math.floor(Date.now() / 1000);

  test.each([
    ["without exp", () => sign({})],
    ["exp beyond the maximum lifetime", () => sign({ exp: now() + 7200 })],
    ["iat to exp longer than the maximum", () => sign({ iat: now() - 3000, exp: now() + 1000 })],
  ])("a token %s is refused with 401", async (_, make) => {
    const answer = await raw(`/api/esign/agreements/${agreementId}`, { authorization: `Bearer ${await make()}` });
    expect(answer.status).toBe(401);
  });

  test("a token with exp within the maximum is accepted", async () => {
    const token = await sign({ iat: now(), exp: now() + 600 });
    expect((await raw(`/api/esign/agreements/${agreementId}`, { authorization: `Bearer ${token}` })).status).toBe(200);
  });
});

describe("row 10: no Host-based CORS exemption", () => {
  test("Host: evil.example with Origin http://evil.example is refused", async () => {
    const answer = await raw(`/api/esign/agreements/${agreementId}`, {
      authorization: `Bearer ${appKey}`,
      host: "evil.example",
      origin: "http://evil.example",
    });
    expect(answer.status).toBe(403);
    expect(answer.headers["access-control-allow-origin"]).toBeUndefined();
  });

  test("an allowed origin still gets its CORS headers", async () => {
    const answer = await raw(`/api/esign/agreements/${agreementId}`, {
      authorization: `Bearer ${appKey}`,
      origin: "https://app.example.com",
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["access-control-allow-origin"]).toBe("https://app.example.com");
  });
});

describe("row 11: headers, auth scheme, events scope", () => {
  test("a header named in Connection is not forwarded upstream", async () => {
    const before = esign.seen.length;
    await raw(`/api/esign/agreements/${agreementId}`, {
      authorization: `Bearer ${appKey}`,
      connection: "keep-alive, Idempotency-Key",
      "idempotency-key": "should-stop-here",
      "if-none-match": '"kept"',
    });
    const seen = esign.seen.slice(before).find((r) => r.path.startsWith("/agreements/"));
    expect(seen?.headers["if-none-match"]).toBe('"kept"');
    expect(seen?.headers["idempotency-key"]).toBeUndefined();
  });

  test("admin routes accept the scheme in any case", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      expect((await raw("/events", { authorization: `${scheme} ${adminKey}` })).status).toBe(200);
    }
  });

  test("scopes.events opens the event log and replay; other clients get 403", async () => {
    expect((await raw("/events?limit=5", { authorization: `Bearer ${consoleKey}` })).status).toBe(200);
    const missing = await raw("/events/evt_00000000000000000000000000000000", {
      authorization: `Bearer ${consoleKey}`,
    });
    expect(missing.status).toBe(404);
    const refused = await raw("/events", { authorization: `Bearer ${appKey}` });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.code).toBe("forbidden");
    expect((await raw("/events", {})).status).toBe(401);
  });
});
