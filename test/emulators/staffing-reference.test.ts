/**
 * The staffing emulator against the staffing reference: auth and key prefixes, `X-RateLimit-*` on
 * every answer, 429 with Retry-After, `X-Request-Id` echoed, CORS preflight, snake_case or
 * camelCase payloads, validation, idempotency by `externalId` and `Idempotency-Key`, simulated
 * calling under each rule, and webhooks (`t=…,v1=…`, `X-Svc-Timestamp`, `X-Svc-Delivery-Id`)
 * verified with the gateway's own verifier, retried at 1 m, 5 m, 30 m, 2 h, 12 h then given up.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { CallAnswer } from "../../emulators/staffing/staffing-context.ts";
import { createStaffingEmulator, type StaffingEmulatorOptions } from "../../emulators/staffing/staffing-emulator.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { verifyStaffingSignature } from "../../src/services/staffing/verify-staffing-signature.ts";

const T0 = Date.parse("2026-11-24T12:00:00.000Z");
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function setup(options: StaffingEmulatorOptions = {}, receiverStatus = () => 200) {
  let t = T0;
  const hooks: { headers: Record<string, string>; body: string }[] = [];
  const em = createStaffingEmulator({
    now: () => t,
    fetch: async (_url, init) => {
      hooks.push({ headers: init?.headers as Record<string, string>, body: String(init?.body) });
      return new Response(null, { status: receiverStatus() });
    },
    ...options,
  });
  closers.push(em.close);
  const call = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    const key = init.key === undefined ? em.apiKey : init.key;
    if (key) headers.set("authorization", `Bearer ${key}`);
    return em.app.fetch(new Request(`http://emulator.test${em.apiPath}${path}`, { ...init, headers }));
  };
  const create = (body: unknown, headers: Record<string, string> = {}) =>
    call("/staffing-requests", {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...headers },
    });
  const events = () => hooks.map((h) => JSON.parse(h.body).event as string);
  return {
    em,
    call,
    create,
    hooks,
    events,
    tick: (ms: number) => (t += ms),
    advance: (ms: number) => em.scheduler.advance(ms),
  };
}

const payload = (extra: Record<string, unknown> = {}, candidates = 2) => ({
  externalId: `shift-${crypto.randomUUID()}`,
  shift: {
    startTime: "2026-12-01T07:00:00+01:00",
    endTime: "2026-12-01T15:00:00+01:00",
    location: "Ward 4",
    role: "Nurse",
  },
  candidates: Array.from({ length: candidates }, (_, i) => ({
    id: `c${i + 1}`,
    name: `Cand ${i + 1}`,
    phone: `+4670000000${i}`,
    priority: i + 1,
  })),
  webhookUrl: "https://client.test/hooks",
  ...extra,
});

describe("auth, headers and limits", () => {
  test.each([
    ["no key", null, 401],
    ["a production key", "sk_live_abc", 401],
    ["an unknown sandbox key", "sk_test_nope", 401],
    ["the sandbox key", undefined, 200],
  ])("GET /me with %s → %i, X-RateLimit-* present", async (_, key, status) => {
    const s = setup();
    const answer = await s.call("/me", { key });
    expect(answer.status).toBe(status);
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"])
      expect(answer.headers.get(h)).not.toBeNull();
    if (status === 401) expect((await answer.json()).error.code).toBe("unauthorized");
  });

  test("60 calls a minute, then 429 rate_limited with Retry-After; healthz needs no key; X-Request-Id echoed", async () => {
    const s = setup();
    expect((await s.call("/healthz", { key: null })).status).toBe(200);
    let last: Response | undefined;
    for (let i = 0; i < 61; i++) last = await s.call("/me", { headers: { "x-request-id": "req-42" } });
    expect(last?.status).toBe(429);
    expect(last?.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(last?.headers.get("x-request-id")).toBe("req-42");
    expect(Number(last?.headers.get("x-ratelimit-reset"))).toBe(Math.ceil((T0 + 60_000) / 1000));
  });

  test("CORS preflight lists the methods and the four headers", async () => {
    const s = setup();
    const answer = await s.call("/staffing-requests", {
      method: "OPTIONS",
      key: null,
      headers: { origin: "https://app.test" },
    });
    expect(answer.status).toBe(204);
    expect(answer.headers.get("access-control-allow-origin")).toBe("https://app.test");
    expect(answer.headers.get("access-control-allow-headers")).toBe(
      "Authorization, Content-Type, Idempotency-Key, X-Request-Id",
    );
  });
});

describe("POST /staffing-requests", () => {
  test.each([
    ["camelCase", payload(), 201],
    [
      "snake_case",
      {
        external_request_id: "s-1",
        webhook_url: "https://c.test/h",
        shift: {
          start_time: "2026-12-01T07:00:00+01:00",
          end_time: "2026-12-01T15:00:00+01:00",
          location: "W",
          role: "R",
        },
        candidates: [{ id: "c1", name: "A", phone: "+46700000000", priority: 1, allowed_to_work: true }],
      },
      201,
    ],
    ["no candidates", payload({ candidates: [] }), 400],
    ["a bad phone", payload({ candidates: [{ id: "c1", name: "A", phone: "0700", priority: 1 }] }), 400],
    [
      "a time without offset",
      payload({
        shift: { startTime: "2026-12-01T07:00:00", endTime: "2026-12-01T15:00:00+01:00", location: "W", role: "R" },
      }),
      400,
    ],
    ["maxAcceptedWorkers 11", payload({ rules: { maxAcceptedWorkers: 11 } }), 400],
  ])("%s → %i", async (_, body, status) => {
    const s = setup();
    const answer = await s.create(body);
    expect(answer.status).toBe(status);
    const json = await answer.json();
    if (status === 201) expect(json).toMatchObject({ status: "queued", staffingRequestId: expect.any(String) });
    else expect(json.error.code).toBe("invalid_request");
  });

  test("idempotency: same externalId returns the existing request; Idempotency-Key replays or is 409 idempotency_conflict", async () => {
    const s = setup();
    const body = payload();
    const first = await (await s.create(body)).json();
    const same = await s.create(body);
    expect(same.status).toBe(200);
    expect((await same.json()).staffingRequestId).toBe(first.staffingRequestId);
    const keyed = payload();
    const a = await s.create(keyed, { "idempotency-key": "k1" });
    const b = await s.create(keyed, { "idempotency-key": "k1" });
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(await b.json()).toEqual(await a.json());
    const c = await s.create(payload(), { "idempotency-key": "k1" });
    expect(c.status).toBe(409);
    expect((await c.json()).error.code).toBe("idempotency_conflict");
  });
});

describe("simulated calling", () => {
  const script = (answers: Record<string, CallAnswer[]>) => ({ script: answers });
  test.each([
    [
      "auto-book: approval off, confident yes",
      { c1: [{ intent: "accepted", confidence: 0.95 }] },
      { requireManagerApproval: false },
      "completed",
      ["staffing.queued", "staffing.calling", "candidate.responded", "candidate.accepted", "staffing.completed"],
    ],
    [
      "approval required",
      { c1: [{ intent: "accepted", confidence: 0.95 }] },
      {},
      "requires_review",
      ["staffing.queued", "staffing.calling", "candidate.responded", "candidate.accepted", "staffing.requires_review"],
    ],
    [
      "confidence below the threshold",
      { c1: [{ intent: "accepted", confidence: 0.6 }] },
      { requireManagerApproval: false },
      "requires_review",
      ["staffing.queued", "staffing.calling", "candidate.responded", "candidate.accepted", "staffing.requires_review"],
    ],
    [
      "decline then yes",
      { c1: [{ intent: "declined" }], c2: [{ intent: "accepted", confidence: 0.99 }] },
      { requireManagerApproval: false },
      "completed",
      [
        "staffing.queued",
        "staffing.calling",
        "candidate.responded",
        "candidate.declined",
        "candidate.responded",
        "candidate.accepted",
        "staffing.completed",
      ],
    ],
    [
      "nobody answers",
      { c1: [{ intent: "no_answer" }], c2: [{ intent: "no_answer" }] },
      {},
      "failed",
      ["staffing.queued", "staffing.calling", "candidate.no_answer", "candidate.no_answer", "staffing.failed"],
    ],
    [
      "two attempts per candidate",
      { c1: [{ intent: "no_answer" }, { intent: "accepted", confidence: 0.99 }], c2: [] },
      { maxAttemptsPerCandidate: 2, requireManagerApproval: false },
      "completed",
      [
        "staffing.queued",
        "staffing.calling",
        "candidate.no_answer",
        "candidate.responded",
        "candidate.accepted",
        "staffing.completed",
      ],
    ],
    [
      "partial yes without allowPartial",
      { c1: [{ intent: "accepted", partial: true }], c2: [{ intent: "no_answer" }] },
      { allowPartial: false },
      "failed",
      [
        "staffing.queued",
        "staffing.calling",
        "candidate.responded",
        "candidate.declined",
        "candidate.no_answer",
        "staffing.failed",
      ],
    ],
    [
      "two workers wanted",
      { c1: [{ intent: "accepted", confidence: 0.99 }], c2: [{ intent: "accepted", confidence: 0.99 }] },
      { maxAcceptedWorkers: 2, requireManagerApproval: false },
      "completed",
      [
        "staffing.queued",
        "staffing.calling",
        "candidate.responded",
        "candidate.accepted",
        "candidate.responded",
        "candidate.accepted",
        "staffing.completed",
      ],
    ],
  ] as const)("%s → %s", async (_, answers, rules, status, events) => {
    const s = setup(script(answers as unknown as Record<string, CallAnswer[]>));
    const { staffingRequestId: id } = await (await s.create(payload({ rules }))).json();
    await s.advance(60_000);
    const request = await (await s.call(`/staffing-requests/${id}`)).json();
    expect(request.status).toBe(status);
    expect(s.events()).toEqual(events);
    expect(request.calls.length).toBeGreaterThan(0);
  });

  test("webhooks carry t=…,v1=…, X-Svc-Timestamp and X-Svc-Delivery-Id the gateway verifies; cancel stops calling", async () => {
    const s = setup({ webhookSecret: "whsec_staffing_0123456789", script: { c1: [{ intent: "declined" }] } });
    const { staffingRequestId: id } = await (await s.create(payload())).json();
    await s.advance(4_000);
    const cancel = await s.call(`/staffing-requests/${id}/cancel`, { method: "POST" });
    expect(await cancel.json()).toEqual({ id, status: "cancelled" });
    await s.advance(60_000);
    expect(s.events().at(-1)).toBe("staffing.cancelled");
    const crypto = createWebCrypto();
    for (const hook of s.hooks) {
      const result = await verifyStaffingSignature(
        {
          signature: hook.headers["x-svc-signature"] ?? null,
          timestamp: hook.headers["x-svc-timestamp"] ?? null,
          rawBody: new TextEncoder().encode(hook.body),
          secrets: ["whsec_staffing_0123456789"],
          toleranceSeconds: 300,
          nowSeconds: Math.floor(Number(hook.headers["x-svc-timestamp"])),
        },
        crypto,
      );
      expect(result).toEqual({ ok: true });
      expect(hook.headers["x-svc-delivery-id"]).toMatch(/^dlv_/);
    }
    expect((await s.call(`/staffing-requests/${id}/retry`, { method: "POST" })).status).toBe(409);
  });

  test("a failing receiver is retried at 1 m, 5 m, 30 m, 2 h, 12 h, then given_up", async () => {
    const s = setup({}, () => 503);
    await s.create(payload());
    await s.advance(0);
    const delivery = s.em.webhooks.deliveries()[0];
    await s.advance(15 * 3600_000);
    const times = delivery?.attempts.map((a) => Date.parse(a.at)) ?? [];
    expect(times.slice(1).map((t, i) => (t - (times[i] as number)) / 60_000)).toEqual([1, 5, 30, 120, 720]);
    expect(delivery?.state).toBe("given_up");
  });
});
