/**
 * Passing calls through a real gateway process: a cold token cache under 500 concurrent calls
 * makes one token request; method, path, query, body and the headers that matter reach the
 * upstream with the gateway's credentials instead of the client's; answers come back with
 * status, body and the upstream's rate-limit, Retry-After and idempotency headers; two accounts
 * of one service work side by side; and no upstream secret or token shows up in any answer,
 * log line (debug level) or metric.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type EsignServer,
  type StaffingServer,
  startEsignEmulator,
  startStaffingEmulator,
} from "../helpers/emulators.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { fullClient, newKey, proxyConfig, proxyEnv } from "./proxy-fixtures.ts";

let esign: EsignServer;
let esignEu: EsignServer;
let staffing: StaffingServer;
let staffingSmall: StaffingServer;
let gateway: GatewayProcess;
const key = newKey();
/** Every answer the tests saw, headers and body, for the secrets check. */
const answers: string[] = [];

beforeAll(async () => {
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  esignEu = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  staffing = await startStaffingEmulator({ limitPerMinute: 100_000 });
  staffingSmall = await startStaffingEmulator({ limitPerMinute: 2 });
  const options = { esign, staffing, clients: [fullClient(key)], log: "debug" as const };
  const config = proxyConfig(options);
  // 500 concurrent calls from one address: more than the default per-address connection cap
  // (256, docs/security-and-deployment.md#what-protects-what), as a busy backend client behind one
  // address would configure.
  config.server = { ...(config.server as object), maxConnectionsPerAddress: 1000 };
  (config.upstreams as Record<string, unknown>[]).push(
    {
      id: "esign-eu",
      service: "esign",
      baseUrl: esignEu.baseUrl,
      clientId: "${TEST_ESIGN_EU_CLIENT_ID}",
      clientSecret: "${TEST_ESIGN_EU_CLIENT_SECRET}",
    },
    { id: "staffing-small", service: "staffing", baseUrl: staffingSmall.baseUrl, apiKey: "${TEST_STAFFING_SMALL_KEY}" },
  );
  gateway = await startGatewayProcess({
    config,
    env: {
      ...proxyEnv(options),
      TEST_ESIGN_EU_CLIENT_ID: esignEu.client.clientId,
      TEST_ESIGN_EU_CLIENT_SECRET: esignEu.client.clientSecret,
      TEST_STAFFING_SMALL_KEY: staffingSmall.apiKey,
    },
  });
});

afterAll(async () => {
  await gateway?.kill();
  await Promise.all([esign, esignEu, staffing, staffingSmall].map((fake) => fake?.close()));
});

async function call(path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (!headers.has("authorization")) headers.set("authorization", `Bearer ${key}`);
  const response = await fetch(`${gateway.url}${path}`, { ...init, headers });
  const body = await response.text();
  answers.push(JSON.stringify([...response.headers]), body);
  return { status: response.status, headers: response.headers, body, json: () => JSON.parse(body) };
}

test("a cold token cache under 500 concurrent calls makes exactly one token request", async () => {
  const id = await esign.createAgreement();
  const results = await Promise.all(Array.from({ length: 500 }, () => call(`/api/esign/agreements/${id}`)));
  expect(results.filter((r) => r.status === 200)).toHaveLength(500);
  expect(esign.tokenRequests()).toBe(1);
  expect(esign.count("GET", `/agreements/${id}`)).toBe(500);
});

describe("requests going upstream", () => {
  test("method, path, query and the headers that matter arrive; the client's credentials and cookies do not", async () => {
    const requestId = `req-${randomUUID()}`;
    const answer = await call("/api/esign/agreements?status=draft&limit=5", {
      headers: {
        accept: "application/json",
        cookie: "session=client-cookie",
        "x-request-id": requestId,
        "x-custom-header": "not forwarded",
        "proxy-authorization": "Basic abc",
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-request-id")).toBe(requestId);
    const seen = esign.seen.at(-1);
    expect(seen).toMatchObject({ method: "GET", path: "/agreements", query: "?status=draft&limit=5" });
    expect(seen?.headers.authorization).toBe(`Bearer ${esign.issued[0]}`);
    expect(seen?.headers["x-request-id"]).toBe(requestId);
    expect(seen?.headers.accept).toBe("application/json");
    expect(seen?.headers.cookie).toBeUndefined();
    expect(seen?.headers["x-custom-header"]).toBeUndefined();
    expect(seen?.headers["proxy-authorization"]).toBeUndefined();
  });

  test("an X-Request-Id is generated when absent, sent upstream and echoed back", async () => {
    const answer = await call("/api/staffing/me");
    expect(answer.status).toBe(200);
    const id = answer.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(staffing.seen.at(-1)?.headers["x-request-id"]).toBe(id);
    expect(staffing.seen.at(-1)?.headers.authorization).toBe(`Bearer ${staffing.apiKey}`);
  });

  test("a JSON body and Idempotency-Key reach the upstream; the replay header comes back", async () => {
    const body = JSON.stringify({ title: "Lease 12", external_id: "ext-1" });
    const headers = { "content-type": "application/json", "idempotency-key": randomUUID() };
    const first = await call("/api/esign/agreements", { method: "POST", headers, body });
    expect(first.status).toBe(201);
    expect(first.json()).toMatchObject({ title: "Lease 12", status: "draft" });
    expect(esign.seen.at(-1)?.headers["idempotency-key"]).toBe(headers["idempotency-key"]);
    const again = await call("/api/esign/agreements", { method: "POST", headers, body });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json()).toEqual(first.json());
  });
});

describe("answers coming back", () => {
  test("staffing rate-limit headers, then 429 with Retry-After (beyond the retry bound) pass through", async () => {
    const first = await call("/api/staffing-small/me");
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    expect(Number(first.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    await call("/api/staffing-small/me");
    const limited = await call("/api/staffing-small/me");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(10);
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(limited.json()).toMatchObject({ error: { code: "rate_limited" } });
    expect(staffingSmall.count("GET", "/me")).toBe(3);
  });

  test("hop-by-hop headers of the upstream are dropped", async () => {
    const id = await esign.createAgreement();
    esign.inject({
      method: "GET",
      path: `/agreements/${id}`,
      fault: { status: 200, body: { id }, headers: { "keep-alive": "timeout=99", "x-upstream-note": "kept" } },
    });
    const answer = await call(`/api/esign/agreements/${id}`);
    expect(answer.headers.get("keep-alive")).not.toBe("timeout=99");
    expect(answer.headers.get("x-upstream-note")).toBe("kept");
  });
});

test("two e-sign accounts side by side each use their own token", async () => {
  const id = await esignEu.createAgreement("EU agreement");
  const answer = await call(`/api/esign-eu/agreements/${id}`);
  expect(answer.status).toBe(200);
  expect(answer.json().title).toBe("EU agreement");
  expect(esignEu.tokenRequests()).toBe(1);
  expect(esignEu.seen.at(-1)?.headers.authorization).toBe(`Bearer ${esignEu.issued[0]}`);
  expect(esign.issued).not.toContain(esignEu.issued[0]);
});

test("no upstream secret or token appears in answers, logs or metrics", async () => {
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  expect(metrics).toContain("gateway_proxy_token_requests_total");
  const everything = [...answers, metrics, ...gateway.lines].join("\n");
  expect(gateway.lines.some((line) => line.includes('"msg":"proxied"'))).toBe(true);
  const secrets = [
    esign.client.clientSecret,
    esignEu.client.clientSecret,
    staffing.apiKey,
    staffingSmall.apiKey,
    key,
    ...esign.issued,
    ...esignEu.issued,
  ];
  expect(secrets.length).toBeGreaterThan(5);
  for (const secret of secrets) expect(everything).not.toContain(secret);
});
