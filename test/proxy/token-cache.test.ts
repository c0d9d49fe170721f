/**
 * The e-sign access token: cached in the store until expiry minus min(60 s, 10 % of the
 * lifetime), refreshed once on expiry, refreshed once after an upstream 401 (the call is resent
 * once), shared by two gateway instances on one store, and token-endpoint failures answered 502
 * `upstream_auth_failed` without the endpoint's body or any secret. The gateway, its memory store
 * and the fake share one injected clock, so expiry is reached by moving the clock, not by waiting.
 */
import { afterEach, describe, expect, test } from "vitest";
import { memoryStore } from "../../adapters/store/memory.ts";
import { type EsignServer, startEsignEmulator } from "../helpers/emulators.ts";
import {
  createTestClock,
  fullClient,
  newKey,
  type ProxyConfigOptions,
  proxyConfig,
  proxyEnv,
  startInProcess,
} from "./proxy-fixtures.ts";

const fakes: EsignServer[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function setup(
  options: { lifetime?: number; upstream?: Record<string, unknown>; env?: Record<string, string> } = {},
) {
  const clock = createTestClock();
  const esign = await startEsignEmulator({
    now: clock.now,
    tokenLifetimeSeconds: options.lifetime,
    generalLimitPerClient: 100_000,
  });
  fakes.push(esign);
  const key = newKey();
  const config: ProxyConfigOptions = { esign, clients: [fullClient(key)], upstream: options.upstream, log: "silent" };
  const env = { ...proxyEnv(config), ...options.env };
  const gw = startInProcess(proxyConfig(config), env, clock, undefined, key);
  const agreementId = await esign.createAgreement("Lease");
  const get = () => gw.call(`/api/esign/agreements/${agreementId}`);
  return { clock, esign, key, gw, agreementId, get, config, env };
}

async function statuses(responses: Promise<Response>[]): Promise<number[]> {
  return Promise.all(responses.map(async (r) => (await r).status));
}

describe("caching and expiry", () => {
  test.each([
    // [lifetime s, last second on the first token, first second on a new one]: skew min(60 s, 10 %)
    [3600, 3539, 3541],
    [300, 269, 271],
    [20, 17, 19],
  ])("a %i s token is used until %i s and refreshed by %i s, exactly once", async (lifetime, keep, refresh) => {
    const { clock, esign, get } = await setup({ lifetime });
    expect((await get()).status).toBe(200);
    expect(esign.tokenRequests()).toBe(1);

    clock.advance(keep * 1000);
    expect((await get()).status).toBe(200);
    expect(esign.tokenRequests()).toBe(1);

    clock.advance((refresh - keep) * 1000);
    const answers = await statuses(Array.from({ length: 50 }, () => get()));
    expect(answers.every((s) => s === 200)).toBe(true);
    expect(esign.tokenRequests()).toBe(2);
  });

  test("the cached token is the one the token endpoint issued, sent as a bearer token", async () => {
    const { esign, get, agreementId } = await setup();
    await get();
    await get();
    const calls = esign.seen.filter((s) => s.path === `/agreements/${agreementId}`);
    expect(calls.map((c) => c.headers.authorization)).toEqual([
      `Bearer ${esign.issued[0]}`,
      `Bearer ${esign.issued[0]}`,
    ]);
  });
});

describe("upstream 401", () => {
  test("a revoked token is refreshed once and the call resent once", async () => {
    const { esign, get, agreementId } = await setup();
    expect((await get()).status).toBe(200);
    esign.revokeAll();
    const answer = await get();
    expect(answer.status).toBe(200);
    expect(esign.tokenRequests()).toBe(2);
    const calls = esign.seen.filter((s) => s.path === `/agreements/${agreementId}`).slice(1);
    expect(calls.map((c) => c.headers.authorization)).toEqual([
      `Bearer ${esign.issued[0]}`,
      `Bearer ${esign.issued[1]}`,
    ]);
  });

  test("50 calls refused together cause one refresh", async () => {
    const { esign, get } = await setup();
    await get();
    esign.revokeAll();
    const answers = await statuses(Array.from({ length: 50 }, () => get()));
    expect(answers.every((s) => s === 200)).toBe(true);
    expect(esign.tokenRequests()).toBe(2);
  });

  test("a second 401 is returned as it came, after one refresh and one resend", async () => {
    const { esign, get, agreementId } = await setup();
    await get();
    const path = `/agreements/${agreementId}`;
    const refusal = { error: { code: "unauthorized", message: "token refused by the fake" } };
    esign.inject({ method: "GET", path, times: 2, fault: { status: 401, body: refusal } });
    const before = esign.count("GET", path);
    const answer = await get();
    expect(answer.status).toBe(401);
    expect(await answer.json()).toEqual(refusal);
    expect(esign.count("GET", path) - before).toBe(2);
    expect(esign.tokenRequests()).toBe(2);
  });

  test("a streamed body cannot be replayed: the 401 is returned, the next call gets a new token", async () => {
    const { esign, gw, agreementId, get } = await setup({ upstream: { replayBodyLimitBytes: 1024 } });
    await get();
    esign.revokeAll();
    const pdf = new Uint8Array(8192).fill(0x25);
    const path = `/agreements/${agreementId}/documents/main`;
    const answer = await gw.call(`/api/esign${path}`, {
      method: "PUT",
      headers: { "content-type": "application/pdf", "content-length": String(pdf.byteLength) },
      body: pdf,
    });
    expect(answer.status).toBe(401);
    expect(esign.count("PUT", path)).toBe(1);
    expect((await get()).status).toBe(200);
    expect(esign.tokenRequests()).toBe(2);
  });
});

describe("two instances sharing one store", () => {
  test("make one token request between them, and one refresh on expiry", async () => {
    const clock = createTestClock();
    const esign = await startEsignEmulator({ now: clock.now, generalLimitPerClient: 100_000 });
    fakes.push(esign);
    const key = newKey();
    const options: ProxyConfigOptions = { esign, clients: [fullClient(key)], log: "silent" };
    const store = memoryStore({ now: clock.now });
    const a = startInProcess(proxyConfig(options), proxyEnv(options), clock, store, key);
    const b = startInProcess(proxyConfig(options), proxyEnv(options), clock, store, key);
    const id = await esign.createAgreement();
    const burst = () =>
      statuses(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).call(`/api/esign/agreements/${id}`)));

    expect((await burst()).every((s) => s === 200)).toBe(true);
    expect(esign.tokenRequests()).toBe(1);

    clock.advance(3600_000);
    expect((await burst()).every((s) => s === 200)).toBe(true);
    expect(esign.tokenRequests()).toBe(2);
  });
});

describe("token endpoint failures", () => {
  test("rejected credentials: 502 upstream_auth_failed, no upstream body, no secret; held briefly", async () => {
    const { esign, get, clock } = await setup({ env: { TEST_ESIGN_CLIENT_SECRET: "wrong-secret-value-123" } });
    const answer = await get();
    expect(answer.status).toBe(502);
    const text = await answer.text();
    expect(JSON.parse(text)).toMatchObject({
      error: { code: "upstream_auth_failed", details: { upstream: "esign", reason: "rejected", status: 401 } },
    });
    expect(text).not.toContain("invalid client credentials");
    expect(text).not.toContain("wrong-secret-value-123");
    expect(text).not.toContain(esign.client.clientId);
    expect(esign.tokenRequests()).toBe(1);

    // Within the hold, callers fail fast instead of spending the 10/min token budget.
    expect((await get()).status).toBe(502);
    expect(esign.tokenRequests()).toBe(1);
    clock.advance(7_000);
    expect((await get()).status).toBe(502);
    expect(esign.tokenRequests()).toBe(2);
  });

  test("5xx from the token endpoint is retried; still failing, it answers 502 without the body", async () => {
    const { esign, get } = await setup({ upstream: { retries: 2 } });
    const body = { error: { code: "server_error", message: "token store exploded" } };
    esign.inject({ method: "POST", path: "/oauth/access-token", times: 3, fault: { status: 500, body } });
    const answer = await get();
    expect(answer.status).toBe(502);
    const text = await answer.text();
    expect(JSON.parse(text).error).toMatchObject({ code: "upstream_auth_failed", details: { reason: "unavailable" } });
    expect(text).not.toContain("exploded");
    expect(esign.tokenRequests()).toBe(3);
  });

  test("a token-endpoint 429 within the bound is waited out, then the token is fetched", async () => {
    const { esign, get } = await setup({ upstream: { maxRetryAfterSeconds: 5 } });
    esign.inject({
      method: "POST",
      path: "/oauth/access-token",
      fault: { status: 429, headers: { "retry-after": "1" }, body: { error: { code: "rate_limited", message: "" } } },
    });
    const started = performance.now();
    expect((await get()).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(esign.tokenRequests()).toBe(2);
  });

  test("a token-endpoint 429 beyond the bound answers 502 with its Retry-After and holds further requests", async () => {
    const { esign, get, clock } = await setup({ upstream: { maxRetryAfterSeconds: 5 } });
    esign.inject({
      method: "POST",
      path: "/oauth/access-token",
      fault: { status: 429, headers: { "retry-after": "120" }, body: { error: { code: "rate_limited", message: "" } } },
    });
    const answer = await get();
    expect(answer.status).toBe(502);
    expect(answer.headers.get("retry-after")).toBe("120");
    expect((await answer.json()).error.details.reason).toBe("rate_limited");
    expect((await get()).status).toBe(502);
    expect(esign.tokenRequests()).toBe(1);
    clock.advance(121_000);
    expect((await get()).status).toBe(200);
    expect(esign.tokenRequests()).toBe(2);
  });

  test("an invalid token response is refused (valibot) and answered 502", async () => {
    const { esign, get } = await setup();
    esign.inject({
      method: "POST",
      path: "/oauth/access-token",
      fault: { status: 200, body: { access_token: "abc", token_type: "Bearer" } },
    });
    const answer = await get();
    expect(answer.status).toBe(502);
    expect((await answer.json()).error.details.reason).toBe("invalid_response");
  });
});
