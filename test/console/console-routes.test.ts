/**
 * The console's routes in-process (src/console/console-routes.ts) and the test-event API
 * (src/sandbox/test-events-api.ts): the page and its deep links with a strict CSP, hashed assets
 * served immutable, the dev key offered only in development mode to a loopback same-origin page,
 * and test events that are signed, verified and recorded like any webhook, only when enabled.
 */
import { describe, expect, test } from "vitest";
import { CONSOLE_ASSETS } from "../../src/console/console-assets.generated.ts";
import type { GatewayOptions } from "../../src/create-gateway.ts";
import { sampleEventTypes } from "../../src/samples/sample-webhooks.ts";
import { makeSecrets } from "../helpers/gateway-process.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { adminKeyHash, expectErrorEnvelope } from "../helpers/signed-requests.ts";
import { toyService } from "../services/toy-service.ts";

function gatewayWith(extra: { testEvents?: boolean; development?: GatewayOptions["development"] } = {}) {
  const secrets = makeSecrets();
  const gateway = buildInProcessGateway({
    config: {
      store: { driver: "memory" },
      sources: [
        { id: "esign", service: "esign", secrets: [secrets.esign] },
        { id: "staffing", service: "staffing", secrets: [secrets.staffing] },
      ],
      admin: { apiKeyHashes: [adminKeyHash(secrets.adminKey)] },
      log: { level: "silent" },
      testEvents: extra.testEvents,
    },
    development: extra.development,
  });
  const request = (path: string, init: RequestInit & { host?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.host) headers.set("host", init.host);
    return gateway.fetch(new Request(`http://127.0.0.1:8787${path}`, { ...init, headers }));
  };
  const admin = { authorization: `Bearer ${secrets.adminKey}`, "content-type": "application/json" };
  return { gateway, secrets, request, admin };
}

describe("GET /console", () => {
  test("answers the app with a strict Content-Security-Policy, also for deep links", async () => {
    const { request } = gatewayWith();
    for (const path of [
      "/console",
      "/console/",
      "/console/search?external_id=x&event=evt_1",
      "/console/events/evt_1",
    ]) {
      const answer = await request(path, { host: "127.0.0.1:8787" });
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = answer.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("connect-src 'self' ws://127.0.0.1:8787 wss://127.0.0.1:8787");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await answer.text()).toContain('<div id="app"></div>');
    }
  });

  test("a Host header that is not a plain host is not echoed into the policy", async () => {
    const { request } = gatewayWith();
    const answer = await request("/console", { host: "evil.example;script-src *" });
    expect(answer.headers.get("content-security-policy")).toContain("connect-src 'self';");
  });

  test("serves the hashed assets with their types, immutable; unknown assets are 404", async () => {
    const { request } = gatewayWith();
    for (const [name, asset] of Object.entries(CONSOLE_ASSETS)) {
      const answer = await request(`/console/assets/${name}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toBe(asset.type);
      expect(answer.headers.get("cache-control")).toContain("immutable");
      expect(await answer.text()).toBe(asset.body);
    }
    await expectErrorEnvelope(await request("/console/assets/app.000000000000.js"), 404, "not_found");
  });
});

describe("GET /console/dev-key", () => {
  test("is 404 unless the gateway runs in zero-config development mode", async () => {
    const { request } = gatewayWith();
    await expectErrorEnvelope(await request("/console/dev-key", { host: "127.0.0.1:8787" }), 404, "not_found");
  });

  test("in development mode, offers the key to a same-origin page on a loopback host only", async () => {
    const { request } = gatewayWith({ development: { devAdminKey: "dev_admin_0123456789abcdef" } });
    const own = await request("/console/dev-key", {
      host: "127.0.0.1:8787",
      headers: { "sec-fetch-site": "same-origin" },
    });
    expect(own.status).toBe(200);
    expect(own.headers.get("cache-control")).toBe("no-store");
    expect(await own.json()).toEqual({ key: "dev_admin_0123456789abcdef", development: true });
    expect((await request("/console/dev-key", { host: "localhost:8787" })).status).toBe(200);
    // DNS rebinding (a foreign host name) and cross-site pages get nothing.
    expect((await request("/console/dev-key", { host: "attacker.example:8787" })).status).toBe(404);
    const crossSite = await request("/console/dev-key", {
      host: "127.0.0.1:8787",
      headers: { "sec-fetch-site": "cross-site" },
    });
    expect(crossSite.status).toBe(404);
  });
});

describe("test events", () => {
  test("are refused (404) unless enabled, and need the admin key", async () => {
    const off = gatewayWith();
    const body = JSON.stringify({ type: "agreement.completed" });
    await expectErrorEnvelope(
      await off.request("/sources/esign/test-events", { method: "POST", headers: off.admin, body }),
      404,
      "not_found",
    );
    await expectErrorEnvelope(await off.request("/test-events", { headers: off.admin }), 404, "not_found");
    const on = gatewayWith({ testEvents: true });
    await expectErrorEnvelope(
      await on.request("/sources/esign/test-events", { method: "POST", body }),
      401,
      "unauthorized",
    );
  });

  test("lists every documented type of each source", async () => {
    const { request, admin } = gatewayWith({ testEvents: true });
    const answer = await request("/test-events", { headers: admin });
    expect(await answer.json()).toEqual({
      sources: [
        { id: "esign", service: "esign", types: [...sampleEventTypes("esign")] },
        { id: "staffing", service: "staffing", types: [...sampleEventTypes("staffing")] },
      ],
    });
  });

  test("every documented type of both services is signed, verified and recorded like a webhook", async () => {
    const { request, admin } = gatewayWith({ testEvents: true });
    for (const source of ["esign", "staffing"] as const) {
      for (const type of sampleEventTypes(source)) {
        const answer = await request(`/sources/${source}/test-events`, {
          method: "POST",
          headers: admin,
          body: JSON.stringify({ type }),
        });
        expect(answer.status, `${source} ${type}`).toBe(202);
        const sent = (await answer.json()) as { status: number; answer: { id: string; duplicate: boolean } };
        expect(sent).toMatchObject({ source, type, status: 202, answer: { duplicate: false } });
        const recorded = (await (await request(`/events/${sent.answer.id}`, { headers: admin })).json()) as {
          source_id: string;
          event: { type: string };
          marks: string[];
          headers: Record<string, string>;
        };
        expect(recorded).toMatchObject({ source_id: source, event: { type } });
        expect(recorded.marks).not.toContain("unknown_type");
        expect(recorded.headers["x-svc-signature"]).toBe("[redacted]");
      }
    }
  });

  test("in development mode test events are on without the config flag", async () => {
    const { request, admin } = gatewayWith({ development: {} });
    const answer = await request("/sources/staffing/test-events", {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ type: "candidate.accepted" }),
    });
    expect(answer.status).toBe(202);
  });

  test("a service registered only with the gateway (not built in) gets its test events too", async () => {
    const secrets = makeSecrets();
    const gateway = buildInProcessGateway({
      config: {
        sources: [{ id: "widgets", service: "toy", secrets: [secrets.esign] }],
        admin: { apiKeyHashes: [adminKeyHash(secrets.adminKey)] },
        log: { level: "silent" },
        testEvents: true,
      },
      services: [toyService],
    });
    const admin = { authorization: `Bearer ${secrets.adminKey}`, "content-type": "application/json" };
    const listed = await gateway.fetch(new Request("http://127.0.0.1:8787/test-events", { headers: admin }));
    expect(await listed.json()).toEqual({
      sources: [{ id: "widgets", service: "toy", types: [...toyService.eventTypes] }],
    });
    const sent = await gateway.fetch(
      new Request("http://127.0.0.1:8787/sources/widgets/test-events", {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ type: "widget.deleted" }),
      }),
    );
    expect(sent.status).toBe(202);
    const { answer } = (await sent.json()) as { answer: { id: string } };
    const recorded = await gateway.fetch(new Request(`http://127.0.0.1:8787/events/${answer.id}`, { headers: admin }));
    expect(await recorded.json()).toMatchObject({ source_id: "widgets", event: { type: "widget.deleted" }, marks: [] });
    await gateway.close();
  });

  test("an undocumented type, an unknown source or a bad body is refused", async () => {
    const { request, admin } = gatewayWith({ testEvents: true });
    const post = (path: string, body: string) => request(path, { method: "POST", headers: admin, body });
    const unknownType = await expectErrorEnvelope(
      await post("/sources/esign/test-events", JSON.stringify({ type: "agreement.exploded" })),
      400,
      "invalid_request",
    );
    expect(unknownType.details.types).toContain("agreement.completed");
    await expectErrorEnvelope(await post("/sources/nope/test-events", '{"type":"x"}'), 404, "unknown_source");
    await expectErrorEnvelope(await post("/sources/esign/test-events", "not json"), 400, "invalid_request");
    await expectErrorEnvelope(await post("/sources/esign/test-events", '{"type":1}'), 400, "invalid_request");
  });
});
