/**
 * The e-sign emulator against the esign reference, table by table: endpoints and their answers,
 * error codes, limits (token endpoint per IP and per client, general 60/min, 429 with
 * Retry-After), idempotency, the state machine, simulated signing on an advanced clock, and
 * webhooks verified with the gateway's own verifier (src/services/esign/verify-esign-signature.ts).
 * In-process: the emulator's h3 app is called with `fetch` semantics; webhooks are captured.
 */

import * as v from "valibot";
import { afterEach, describe, expect, test } from "vitest";
import { createEsignEmulator, type EsignEmulatorOptions } from "../../emulators/esign/esign-emulator.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { EsignWebhookBody } from "../../src/services/esign/esign-webhook-schema.ts";
import { verifyEsignSignature } from "../../src/services/esign/verify-esign-signature.ts";

const T0 = Date.parse("2026-11-24T12:00:00.000Z");
const SECRET = "whsec_test_0123456789abcdef";
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

interface Captured {
  url: string;
  headers: Record<string, string>;
  body: string;
}

async function setup(options: EsignEmulatorOptions = {}, receiverStatus = () => 200) {
  let t = T0;
  const hooks: Captured[] = [];
  const em = createEsignEmulator({
    now: () => t,
    fetch: async (url, init) => {
      hooks.push({ url: String(url), headers: init?.headers as Record<string, string>, body: String(init?.body) });
      return new Response(null, { status: receiverStatus() });
    },
    ...options,
  });
  closers.push(em.close);
  em.registerWebhook("https://receiver.test/hooks", SECRET);
  const call = (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    if (init.token) headers.set("authorization", `Bearer ${init.token}`);
    if (typeof init.body === "string") headers.set("content-type", headers.get("content-type") ?? "application/json");
    return em.app.fetch(new Request(`http://emulator.test${em.apiPath}${path}`, { ...init, headers }));
  };
  const tokenFor = async (clientId = em.client.clientId, clientSecret = em.client.clientSecret) =>
    call("/oauth/access-token", {
      method: "POST",
      body: JSON.stringify({ client_id: clientId, client_secret: clientSecret }),
    });
  const token = (await (await tokenFor()).json()).access_token as string;
  const post = (path: string, body: unknown, extra: RequestInit = {}) =>
    call(path, { method: "POST", body: JSON.stringify(body), token, ...extra });
  const advance = async (ms: number) => {
    await em.scheduler.advance(ms);
  };
  const control = (path: string, body: unknown = {}) =>
    em.app.fetch(new Request(`http://emulator.test/_emulator${path}`, { method: "POST", body: JSON.stringify(body) }));
  return { em, call, post, token, tokenFor, hooks, advance, control, tick: (ms: number) => (t += ms) };
}

const PDF = btoa("%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n");

async function sentAgreement(s: Awaited<ReturnType<typeof setup>>, extra: Record<string, unknown> = {}) {
  const created = await (
    await s.post("/agreements", {
      title: "Lease",
      sender: { name: "Bo Ek", email: "bo@example.com" },
      participants: [{ name: "Anna Svensson", email: "anna@example.com" }],
      ...extra,
    })
  ).json();
  await s.call(`/agreements/${created.id}/documents/main`, {
    method: "PUT",
    token: s.token,
    body: JSON.stringify({ filename: "lease.pdf", content_base64: PDF }),
  });
  const sent = await s.post(`/agreements/${created.id}/lifecycle`, { action: "send" });
  expect(await sent.json()).toEqual({ ok: true, status: "sent" });
  return created.id as string;
}

describe("token endpoint", () => {
  test.each([
    ["valid credentials", undefined, undefined, 200],
    ["wrong secret", undefined, "wrong", 401],
    ["unknown client", "cid_nope", "x", 401],
  ])("%s → %i", async (_, id, secret, status) => {
    const s = await setup();
    const answer = await s.tokenFor(id ?? s.em.client.clientId, secret ?? s.em.client.clientSecret);
    expect(answer.status).toBe(status);
    const body = await answer.json();
    if (status === 200) {
      expect(body).toMatchObject({
        token_type: "Bearer",
        expires_in: 3600,
        expires_at: new Date(T0 + 3600_000).toISOString(),
      });
      expect(body.scope.split(" ")).toContain("agreements:read");
    } else expect(body.error.code).toBe("unauthorized");
  });

  test("a token expires after 3600 s and DELETE revokes it", async () => {
    const s = await setup();
    expect((await s.call("/agreements", { token: s.token })).status).toBe(200);
    s.tick(3600_000);
    expect((await s.call("/agreements", { token: s.token })).status).toBe(401);
    const fresh = (await (await s.tokenFor()).json()).access_token;
    expect((await s.call("/oauth/access-token", { method: "DELETE", token: fresh })).status).toBe(204);
    expect((await s.call("/agreements", { token: fresh })).status).toBe(401);
  });

  test.each([
    ["per IP (10/min)", { tokenLimitPerClient: 1000 }, 10],
    ["per client_id (30/min)", { tokenLimitPerIp: 1000 }, 30],
  ])("the token endpoint limit %s answers 429 rate_limited with Retry-After", async (_, options, limit) => {
    const s = await setup(options);
    const statuses: number[] = [];
    for (let i = 1; i < limit + 1; i++) statuses.push((await s.tokenFor()).status);
    expect(statuses.slice(0, limit - 1).every((x) => x === 200)).toBe(true);
    const refused = statuses.at(-1) === 429 ? undefined : await s.tokenFor();
    const last = refused ?? (await s.tokenFor());
    expect(last.status).toBe(429);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await last.json()).error.code).toBe("rate_limited");
  });

  test("general limit: the 61st call in a minute is 429; a minute later calls pass", async () => {
    const s = await setup();
    for (let i = 0; i < 60; i++) expect((await s.call("/agreements", { token: s.token })).status).toBe(200);
    const limited = await s.call("/agreements", { token: s.token });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    s.tick(60_000);
    expect((await s.call("/agreements", { token: s.token })).status).toBe(200);
  });
});

describe("agreements: answers and error codes", () => {
  test.each([
    ["no title", {}, 400, "invalid_request"],
    ["title over 255", { title: "x".repeat(256) }, 400, "invalid_request"],
    ["bad external_source", { title: "t", external_source: "Bad Source" }, 400, "invalid_request"],
    [
      "personal number without eid",
      { title: "t", participants: [{ name: "A", email: "a@example.com", signer_personal_number: "19121212-1212" }] },
      400,
      "invalid_request",
    ],
    [
      "personal number failing Luhn",
      {
        title: "t",
        eid_required: true,
        participants: [{ name: "A", email: "a@example.com", signer_personal_number: "19121212-1213" }],
      },
      400,
      "invalid_request",
    ],
    ["valid", { title: "Lease", external_id: "deal-1", external_source: "crm" }, 201, undefined],
  ])("POST /agreements, %s → %i", async (_, body, status, code) => {
    const s = await setup();
    const answer = await s.post("/agreements", body);
    expect(answer.status).toBe(status);
    const json = await answer.json();
    if (code) expect(json.error.code).toBe(code);
    else expect(json).toMatchObject({ status: "draft", version: 1, parties: [], document: { uploaded: false } });
  });

  test.each([
    ["no token", null, 401, "unauthorized"],
    ["unknown agreement", "token", 404, "not_found"],
  ])("GET /agreements/{id} with %s → %i %s", async (_, auth, status, code) => {
    const s = await setup();
    const answer = await s.call(`/agreements/${crypto.randomUUID()}`, { token: auth && s.token });
    expect(answer.status).toBe(status);
    expect((await answer.json()).error.code).toBe(code);
  });

  test("a missing scope is 403 forbidden", async () => {
    const s = await setup({ clients: [{ clientId: "reader", clientSecret: "s", scopes: ["agreements:read"] }] });
    const token = (await (await s.tokenFor("reader", "s")).json()).access_token;
    const answer = await s.call("/agreements", { method: "POST", token, body: JSON.stringify({ title: "t" }) });
    expect(answer.status).toBe(403);
    expect((await answer.json()).error.code).toBe("forbidden");
  });

  test("Idempotency-Key: same body replays with Idempotent-Replayed, another body is 409, 81 chars is 400, 24 h later it is new", async () => {
    const s = await setup();
    const headers = { "idempotency-key": "k-1" };
    const first = await s.post("/agreements", { title: "A" }, { headers });
    const again = await s.post("/agreements", { title: "A" }, { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    expect((await s.post("/agreements", { title: "B" }, { headers })).status).toBe(409);
    expect(
      (await s.post("/agreements", { title: "A" }, { headers: { "idempotency-key": "k".repeat(81) } })).status,
    ).toBe(400);
    s.tick(24 * 3600_000);
    await s.advance(0);
    const token = (await (await s.tokenFor()).json()).access_token;
    const later = await s.call("/agreements", { method: "POST", token, headers, body: JSON.stringify({ title: "A" }) });
    expect(later.headers.get("idempotent-replayed")).toBeNull();
  });

  test("list filters, limit bounds and group=latest hide superseded versions", async () => {
    const s = await setup({ generalLimitPerClient: 1000 });
    await s.post("/agreements", { title: "v1", external_source: "crm", external_id: "d1" });
    const v2 = await (await s.post("/agreements", { title: "v2", external_source: "crm", external_id: "d1" })).json();
    await s.post("/agreements", { title: "other" });
    const list = async (q: string) => (await (await s.call(`/agreements${q}`, { token: s.token })).json()).agreements;
    expect((await list("")).map((a: { title: string }) => a.title)).toEqual(["other", "v2"]);
    expect(await list("?group=all")).toHaveLength(3);
    expect((await list("?external_id=d1&group=all")).map((a: { version: number }) => a.version)).toEqual([2, 1]);
    expect(v2).toMatchObject({
      version: 2,
      versions: [
        { version: 1, status: "cancelled" },
        { version: 2, is_current: true },
      ],
    });
    for (const q of ["?limit=0", "?limit=201", "?status=bogus"])
      expect((await s.call(`/agreements${q}`, { token: s.token })).status).toBe(400);
    const page = await (await s.call("/agreements?group=all&limit=2", { token: s.token })).json();
    expect(page.agreements).toHaveLength(2);
    const rest = await (
      await s.call(`/agreements?group=all&limit=2&cursor=${page.next_cursor}`, { token: s.token })
    ).json();
    expect(rest).toMatchObject({ agreements: [{ title: "v1" }], next_cursor: null });
  });

  test("PATCH on a terminal status is 409; DELETE removes drafts only", async () => {
    const s = await setup();
    const draft = await (await s.post("/agreements", { title: "d" })).json();
    expect(
      (
        await s.call(`/agreements/${draft.id}`, {
          method: "PATCH",
          token: s.token,
          body: JSON.stringify({ title: "d2" }),
        })
      ).status,
    ).toBe(200);
    const id = await sentAgreement(s);
    await s.post(`/agreements/${id}/lifecycle`, { action: "cancel" });
    const patch = await s.call(`/agreements/${id}`, {
      method: "PATCH",
      token: s.token,
      body: JSON.stringify({ title: "x" }),
    });
    expect(patch.status).toBe(409);
    expect((await patch.json()).error.code).toBe("conflict");
    expect((await s.call(`/agreements/${id}`, { method: "DELETE", token: s.token })).status).toBe(409);
    expect((await s.call(`/agreements/${draft.id}`, { method: "DELETE", token: s.token })).status).toBe(204);
    expect((await s.call(`/agreements/${draft.id}`, { token: s.token })).status).toBe(404);
  });

  test.each([
    ["eid_required without the eid add-on", { eid_required: true }, 402, "eid_disabled"],
    ["secure_link without the eid add-on", { completed_delivery: "secure_link" }, 402, "eid_disabled"],
  ])("send with %s → %i %s", async (_, extra, status, code) => {
    const s = await setup();
    const created = await (
      await s.post("/agreements", { title: "t", participants: [{ name: "A", email: "a@example.com" }], ...extra })
    ).json();
    await s.call(`/agreements/${created.id}/documents/main`, {
      method: "PUT",
      token: s.token,
      body: JSON.stringify({ filename: "a.pdf", content_base64: PDF }),
    });
    const answer = await s.post(`/agreements/${created.id}/lifecycle`, { action: "send" });
    expect(answer.status).toBe(status);
    expect((await answer.json()).error.code).toBe(code);
  });

  test("secure_link with the add-on needs every signer tied to a personal number", async () => {
    const s = await setup({ account: { eidAddon: true } });
    const created = await (
      await s.post("/agreements", {
        title: "t",
        completed_delivery: "secure_link",
        participants: [{ name: "A", email: "a@example.com" }],
      })
    ).json();
    await s.call(`/agreements/${created.id}/documents/main`, {
      method: "PUT",
      token: s.token,
      body: JSON.stringify({ filename: "a.pdf", content_base64: PDF }),
    });
    const answer = await s.post(`/agreements/${created.id}/lifecycle`, { action: "send" });
    expect(answer.status).toBe(400);
    expect((await answer.json()).error.code).toBe("personal_number_required_for_secure_delivery");
  });
});

describe("simulated signing and webhooks", () => {
  test("send → viewed → signed → completed, each a signed webhook the gateway verifies and its schema accepts", async () => {
    const s = await setup();
    const id = await sentAgreement(s);
    const sent = await (await s.call(`/agreements/${id}`, { token: s.token })).json();
    expect(sent.parties.find((p: { is_sender: boolean }) => p.is_sender)).toMatchObject({
      status: "signed",
      email: "bo@example.com",
    });
    expect((await s.call(`/agreements/${id}/signed-pdf`, { token: s.token })).status).toBe(409);
    await s.advance(10_000);
    const done = await (await s.call(`/agreements/${id}`, { token: s.token })).json();
    expect(done).toMatchObject({ status: "completed", signed_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(s.hooks.map((h) => JSON.parse(h.body).event)).toEqual([
      "agreement.sent",
      "agreement.viewed",
      "agreement.signed",
      "agreement.completed",
    ]);
    const crypto = createWebCrypto();
    for (const hook of s.hooks) {
      const raw = new TextEncoder().encode(hook.body);
      expect(
        await verifyEsignSignature(
          { signature: hook.headers["x-svc-signature"] ?? null, rawBody: raw, secrets: [SECRET] },
          crypto,
        ),
      ).toEqual({ ok: true });
      expect(v.safeParse(EsignWebhookBody, JSON.parse(hook.body)).success).toBe(true);
      expect(hook.headers["x-svc-event"]).toBe(JSON.parse(hook.body).event);
    }
    const signed = JSON.parse(s.hooks[2]?.body ?? "{}");
    expect(signed.signature).toMatchObject({
      method: "otp_email",
      signer_name: "Anna Svensson",
      email: "anna@example.com",
    });
    const completed = JSON.parse(s.hooks[3]?.body ?? "{}");
    expect(completed.participants).toHaveLength(2);
    expect(completed.document.signed_pdf_url).toBe(done.signed_pdf_url);
    const pdf = await (await s.call(`/agreements/${id}/signed-pdf`, { token: s.token })).json();
    expect(pdf).toMatchObject({ url: expect.stringContaining("/files/signed/"), expires_in: 3600 });
  });

  test("control calls drive signing by hand; decline makes the agreement declined", async () => {
    const s = await setup({ signing: { auto: false } });
    const id = await sentAgreement(s);
    await s.advance(60_000);
    const agreement = await (await s.call(`/agreements/${id}`, { token: s.token })).json();
    expect(agreement.status).toBe("sent");
    const anna = agreement.parties.find((p: { email: string }) => p.email === "anna@example.com");
    const declined = await (
      await s.control(`/agreements/${id}/participants/${anna.id}/decline`, { reason: "no" })
    ).json();
    expect(declined.status).toBe("declined");
    await s.advance(0);
    expect(JSON.parse(s.hooks.at(-1)?.body ?? "{}")).toMatchObject({
      event: "agreement.declined",
      participant: { id: anna.id },
    });
  });

  test("a failing receiver is retried with exponential backoff (1, 2, 4 … min) and given up after 10 retries", async () => {
    const s = await setup({}, () => 500);
    await s.post("/agreements", { title: "t" });
    const id = await sentAgreement(s);
    void id;
    await s.advance(0);
    const delivery = s.em.webhooks.deliveries().find((d) => d.event === "agreement.sent");
    expect(delivery?.state).toBe("retrying");
    await s.advance(60_000);
    expect(delivery?.attempts).toHaveLength(2);
    await s.advance(24 * 3600_000);
    expect(delivery?.attempts).toHaveLength(11);
    expect(delivery?.state).toBe("given_up");
    const times = delivery?.attempts.map((a) => Date.parse(a.at)) ?? [];
    expect(times.slice(1).map((t, i) => (t - (times[i] as number)) / 60_000)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
    ]);
  });
});
