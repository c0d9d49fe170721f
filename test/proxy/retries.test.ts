/**
 * Retries through a real gateway process: network errors, 502/503/504 and 429 are retried for
 * GET/HEAD/OPTIONS/PUT/DELETE and for POST/PATCH with an `Idempotency-Key`, never for other
 * writes; `Retry-After` is waited out up to the bound and passed back beyond it; timeouts
 * answer 504 and gateway-side network failures 502, while upstream errors keep their status and
 * envelope. The fakes count what they saw, so "not retried" means exactly one call arrived.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type EsignServer,
  type StaffingServer,
  startEsignEmulator,
  startStaffingEmulator,
} from "../helpers/emulators.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { fullClient, newKey, startProxyProcess } from "./proxy-fixtures.ts";

let esign: EsignServer;
let staffing: StaffingServer;
let gateway: GatewayProcess;
const key = newKey();

beforeAll(async () => {
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  staffing = await startStaffingEmulator({ limitPerMinute: 100_000 });
  gateway = await startProxyProcess({
    esign,
    staffing,
    clients: [fullClient(key)],
    upstream: { retries: 2, retryDelayMs: 1, maxRetryAfterSeconds: 2, timeoutMs: 1_000 },
  });
});

afterAll(async () => {
  await gateway?.kill();
  await esign?.close();
  await staffing?.close();
});

function call(path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${key}`);
  return fetch(`${gateway.url}${path}`, { ...init, headers });
}

const serverError = { error: { code: "server_error", message: "injected failure" } };

function newStaffingRequest() {
  return JSON.stringify({
    externalId: `shift-${randomUUID()}`,
    shift: {
      id: "s1",
      startTime: "2026-12-01T07:00:00+01:00",
      endTime: "2026-12-01T15:00:00+01:00",
      location: "Ward 4",
      role: "Nurse",
    },
    candidates: [{ id: "c1", name: "A", phone: "+46700000000", priority: 1 }],
    webhookUrl: "http://127.0.0.1:9/hook" /* refused: the emulator's webhooks stay on loopback */,
  });
}

describe("safe calls are retried", () => {
  test.each([
    ["503", { status: 503, body: serverError }],
    ["502", { status: 502, body: serverError }],
    ["504", { status: 504, body: serverError }],
    ["a destroyed socket", { destroy: true as const }],
  ])("GET after %s: retried, answered 200", async (_, fault) => {
    const id = await esign.createAgreement();
    const path = `/agreements/${id}`;
    esign.inject({ method: "GET", path, fault });
    const answer = await call(`/api/esign${path}`);
    expect(answer.status).toBe(200);
    expect((await answer.json()).id).toBe(id);
    expect(esign.count("GET", path)).toBe(2);
  });

  test("PUT with a small body after a destroyed socket: retried with the same body", async () => {
    const id = await esign.createAgreement();
    const path = `/agreements/${id}/documents/main`;
    esign.inject({ method: "PUT", path, fault: { destroy: true } });
    const pdf = Buffer.from("%PDF-1.4\nsmall test document\n%%EOF\n");
    const answer = await call(`/api/esign${path}`, {
      method: "PUT",
      headers: { "content-type": "application/pdf" },
      body: pdf,
    });
    expect(answer.status).toBe(200);
    expect(esign.count("PUT", path)).toBe(2);
    const { createHash } = await import("node:crypto");
    expect(await esign.documentHashes.get(id)).toBe(createHash("sha256").update(pdf).digest("hex"));
  });

  test("POST with an Idempotency-Key after a 503: retried; the same key again is replayed by the upstream", async () => {
    const body = newStaffingRequest();
    const headers = { "content-type": "application/json", "idempotency-key": randomUUID() };
    const before = staffing.count("POST", "/staffing-requests");
    staffing.inject({ method: "POST", path: "/staffing-requests", fault: { status: 503, body: serverError } });
    const first = await call("/api/staffing/staffing-requests", { method: "POST", headers, body });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const created = await first.json();
    expect(staffing.count("POST", "/staffing-requests") - before).toBe(2);

    const again = await call("/api/staffing/staffing-requests", { method: "POST", headers, body });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(created);
  });

  test("429 with Retry-After within the bound: waited out, then retried", async () => {
    const id = await esign.createAgreement();
    const path = `/agreements/${id}`;
    const limited = { error: { code: "rate_limited", message: "slow down" } };
    esign.inject({ method: "GET", path, fault: { status: 429, headers: { "retry-after": "1" }, body: limited } });
    const started = performance.now();
    const answer = await call(`/api/esign${path}`);
    expect(answer.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(esign.count("GET", path)).toBe(2);
  });

  test("retries are bounded: after 1 + 2 attempts the upstream's 503 and envelope come back", async () => {
    const id = await esign.createAgreement();
    const path = `/agreements/${id}`;
    esign.inject({ method: "GET", path, times: 5, fault: { status: 503, body: serverError } });
    const answer = await call(`/api/esign${path}`);
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual(serverError);
    expect(esign.count("GET", path)).toBe(3);
  });
});

describe("unsafe calls are sent once", () => {
  test("POST without Idempotency-Key after a 503: the 503 comes back, the upstream saw one call", async () => {
    const before = staffing.count("POST", "/staffing-requests");
    staffing.inject({ method: "POST", path: "/staffing-requests", fault: { status: 503, body: serverError } });
    const answer = await call("/api/staffing/staffing-requests", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: newStaffingRequest(),
    });
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual(serverError);
    expect(staffing.count("POST", "/staffing-requests") - before).toBe(1);
  });

  test("POST without Idempotency-Key on a destroyed socket: 502 upstream_unavailable, one call", async () => {
    const before = esign.count("POST", "/agreements");
    esign.inject({ method: "POST", path: "/agreements", fault: { destroy: true } });
    const answer = await call("/api/esign/agreements", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "Lease" }),
    });
    expect(answer.status).toBe(502);
    expect((await answer.json()).error).toMatchObject({ code: "upstream_unavailable", details: { upstream: "esign" } });
    expect(esign.count("POST", "/agreements") - before).toBe(1);
  });

  test("429 with Retry-After beyond the bound: passed back with its Retry-After, one call", async () => {
    const id = await esign.createAgreement();
    const path = `/agreements/${id}`;
    const limited = { error: { code: "rate_limited", message: "slow down" } };
    esign.inject({ method: "GET", path, fault: { status: 429, headers: { "retry-after": "30" }, body: limited } });
    const answer = await call(`/api/esign${path}`);
    expect(answer.status).toBe(429);
    expect(answer.headers.get("retry-after")).toBe("30");
    expect(await answer.json()).toEqual(limited);
    expect(esign.count("GET", path)).toBe(1);
  });
});

describe("gateway-side failures and upstream errors", () => {
  test("no answer within the upstream's timeout: 504 upstream_timeout, not retried", async () => {
    const id = await esign.createAgreement();
    const path = `/agreements/${id}`;
    esign.inject({ method: "GET", path, fault: { hang: true } });
    const answer = await call(`/api/esign${path}`);
    expect(answer.status).toBe(504);
    expect((await answer.json()).error.code).toBe("upstream_timeout");
    expect(esign.count("GET", path)).toBe(1);
  });

  test("an upstream 404 keeps its status and envelope", async () => {
    const answer = await call(`/api/esign/agreements/${randomUUID()}`);
    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({ error: { code: "not_found", message: "agreement not found" } });
  });

  test("the gateway's metrics count proxy calls by upstream and status, and retries by reason", async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).toMatch(/gateway_proxy_requests_total\{status="200",upstream="esign"\} \d+/);
    expect(text).toMatch(/gateway_proxy_requests_total\{status="504",upstream="esign"\} 1/);
    expect(text).toMatch(/gateway_proxy_retries_total\{reason="network",upstream="esign"\} \d+/);
    expect(text).toMatch(/gateway_proxy_token_requests_total\{outcome="ok",upstream="esign"\} 1/);
  });
});
