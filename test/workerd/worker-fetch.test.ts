/**
 * The Worker entry (adapters/cloudflare/worker.ts) inside workerd: signed deliveries through
 * `exports.default.fetch` are recorded once (202, then 200 duplicate), and bad ones get the
 * error envelope.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createWorkerConfig } from "../../adapters/cloudflare/worker.ts";
import { ConfigError } from "../../src/config/resolve-config.ts";
import { ESIGN_SECRET, esignSignature, STAFFING_SECRET, staffingSignature } from "./reference-signatures.ts";

const BASE = "http://gateway.test";

function post(sourceId: string, body: string, headers: Record<string, string>) {
  return exports.default.fetch(`${BASE}/webhooks/${sourceId}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

const esignBody = (eventId: string) =>
  JSON.stringify({ event: "agreement.completed", event_type: "agreement.completed", event_id: eventId });

describe("POST /webhooks/{sourceId} in workerd", () => {
  it("records a signed e-sign delivery once: 202, then 200 duplicate with the same id", async () => {
    const body = esignBody(`evt-${crypto.randomUUID()}`);
    const headers = { "x-svc-signature": await esignSignature(ESIGN_SECRET, body) };
    const first = await post("esign", body, headers);
    expect(first.status).toBe(202);
    const created = (await first.json()) as { id: string; duplicate: boolean };
    expect(created).toEqual({ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), duplicate: false });

    const second = await post("esign", body, headers);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ id: created.id, duplicate: true });
  });

  it("records a signed staffing delivery once, keyed by X-Svc-Delivery-Id", async () => {
    const body = JSON.stringify({ event: "staffing.completed", staffingRequestId: "sr_w1", status: "completed" });
    const t = Math.floor(Date.now() / 1000);
    const headers = {
      "x-svc-signature": await staffingSignature(STAFFING_SECRET, body, t),
      "x-svc-timestamp": String(t),
      "x-svc-delivery-id": `del-${crypto.randomUUID()}`,
    };
    const first = await post("staffing", body, headers);
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    const second = await post("staffing", body, headers);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ id, duplicate: true });
  });

  it("answers 401 invalid_signature for a tampered body", async () => {
    const body = esignBody(`evt-${crypto.randomUUID()}`);
    const response = await post("esign", body.replace("completed", "cancelled"), {
      "x-svc-signature": await esignSignature(ESIGN_SECRET, body),
    });
    expect(response.status).toBe(401);
    const { error } = (await response.json()) as { error: { code: string; details?: unknown } };
    expect(error.code).toBe("invalid_signature");
    expect(error.details).toEqual({ reason: "signature_mismatch" });
  });

  it("answers 401 timestamp_out_of_tolerance for a stale staffing delivery", async () => {
    const body = JSON.stringify({ event: "staffing.queued", staffingRequestId: "sr_w2" });
    const t = Math.floor(Date.now() / 1000) - 3600;
    const response = await post("staffing", body, {
      "x-svc-signature": await staffingSignature(STAFFING_SECRET, body, t),
      "x-svc-delivery-id": `del-${crypto.randomUUID()}`,
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("timestamp_out_of_tolerance");
  });

  it("answers 404 unknown_source and serves /healthz", async () => {
    const unknown = await post("nope", "{}", {});
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("unknown_source");
    // Anonymous callers get only `ok`; the admin key reads the details (src/ops/ops-access.ts).
    const health = await exports.default.fetch(`${BASE}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    const detailed = await exports.default.fetch(`${BASE}/healthz`, {
      headers: { authorization: `Bearer ${env.WORKERD_TEST_ADMIN_KEY}` },
    });
    expect(detailed.status).toBe(200);
    expect(await detailed.json()).toMatchObject({ ok: true, store: { driver: "durable-object", reachable: true } });
  });
});

describe("createWorkerConfig", () => {
  it("builds both sources from the bindings", () => {
    const config = createWorkerConfig({ ESIGN_WEBHOOK_SECRET: ESIGN_SECRET, STAFFING_WEBHOOK_SECRET: STAFFING_SECRET });
    expect(config.store).toEqual({ driver: "memory" });
    expect(config.sources.map((s) => [s.id, s.service, s.secrets])).toEqual([
      ["esign", "esign", [ESIGN_SECRET]],
      ["staffing", "staffing", [STAFFING_SECRET]],
    ]);
  });

  it("takes several active secrets per source from a comma-separated binding (key rotation)", () => {
    const config = createWorkerConfig({
      ESIGN_WEBHOOK_SECRETS: "esign_rotation_old_secret_0123, esign_rotation_new_secret_4567",
      STAFFING_WEBHOOK_SECRET: STAFFING_SECRET,
      STAFFING_WEBHOOK_SECRETS: "staffing_rotation_next_secret_89",
    });
    expect(config.sources.map((s) => s.secrets)).toEqual([
      ["esign_rotation_old_secret_0123", "esign_rotation_new_secret_4567"],
      [STAFFING_SECRET, "staffing_rotation_next_secret_89"],
    ]);
  });

  it("reads destinations and routes from GATEWAY_CONFIG, resolving ${VAR} from the bindings", () => {
    const config = createWorkerConfig({
      ESIGN_WEBHOOK_SECRET: ESIGN_SECRET,
      STAFFING_WEBHOOK_SECRET: STAFFING_SECRET,
      GATEWAY_CONFIG: JSON.stringify({
        destinations: [{ id: "q", type: "queue", driver: "cloudflare-queues", binding: "EVENTS" }],
        routes: [{ destinations: ["q"] }],
        upstreams: [],
      }),
    } as Parameters<typeof createWorkerConfig>[0]);
    expect(config.destinations).toMatchObject([
      { id: "q", type: "queue", driver: "cloudflare-queues", binding: "EVENTS" },
    ]);
    expect(config.sources.map((s) => s.id)).toEqual(["esign", "staffing"]);
    expect(() => createWorkerConfig({ ESIGN_WEBHOOK_SECRET: ESIGN_SECRET, GATEWAY_CONFIG: "{" })).toThrow(
      /GATEWAY_CONFIG/,
    );
  });

  it("names the missing binding's field and never the other secret", () => {
    let error: unknown;
    try {
      createWorkerConfig({ ESIGN_WEBHOOK_SECRET: ESIGN_SECRET, GATEWAY_LOG_LEVEL: "loud" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    // Every problem at once (src/config/check-config.ts): the missing binding and the bad level.
    expect((error as ConfigError).problems).toEqual([
      "sources.1.secrets.0: environment variable STAFFING_WEBHOOK_SECRET is not set",
      expect.stringMatching(/^log\.level: .*"loud"/),
    ]);
    expect((error as Error).message).not.toContain(ESIGN_SECRET);
  });

  it("names log.level when GATEWAY_LOG_LEVEL is not a level", () => {
    expect(() =>
      createWorkerConfig({
        ESIGN_WEBHOOK_SECRET: ESIGN_SECRET,
        STAFFING_WEBHOOK_SECRET: STAFFING_SECRET,
        GATEWAY_LOG_LEVEL: "loud",
      }),
    ).toThrow(/log\.level: .*"loud"/);
  });
});
