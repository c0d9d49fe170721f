/**
 * `gateway listen` against a real gateway process and a real local app: the app down then up
 * (retried, nothing skipped), the listener killed with SIGKILL while events keep arriving
 * (restart delivers every event once, in order, with the same secret), and the `upstream`
 * format verified by the gateway's own e-sign and staffing verification code.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { createWebCrypto, utf8 } from "../../src/crypto/crypto-port.ts";
import { verifyEsignSignature } from "../../src/services/esign/verify-esign-signature.ts";
import { verifyStaffingSignature } from "../../src/services/staffing/verify-staffing-signature.ts";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { type GatewayProcess, makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import { freePort, liveConfig, startListener, tempDir } from "./listen-fixtures.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startGateway(): Promise<GatewayProcess> {
  const secrets = makeSecrets();
  const dataDir = await tempDir("gw-listen-data-");
  const gateway = await startGatewayProcess({ secrets, dataDir, config: liveConfig(dataDir, secrets.adminKey) });
  cleanups.push(() => gateway.kill());
  return gateway;
}

async function listen(gateway: GatewayProcess, target: string, statePath: string, extra: string[] = []) {
  const listener = await startListener([
    gateway.url,
    "--forward-to",
    target,
    "--key",
    gateway.secrets.adminKey,
    "--state",
    statePath,
    "--retry-max-ms",
    "200",
    ...extra,
  ]);
  cleanups.push(() => listener.kill());
  return listener;
}

async function receiver(port = 0): Promise<WebhookReceiver> {
  const app = await startWebhookReceiver(undefined, port);
  cleanups.push(() => app.close());
  return app;
}

/** Posts `count` e-sign events one after another; their gateway ids in order. */
async function postEsign(gateway: GatewayProcess, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign));
    expect(response.status).toBe(202);
    ids.push(((await response.json()) as { id: string }).id);
  }
  return ids;
}

describe("gateway listen", () => {
  it("retries a local app that is down, then delivers every event once, in order, signed", async () => {
    const gateway = await startGateway();
    const port = await freePort();
    const statePath = join(await tempDir("gw-listen-state-"), "state.json");
    const listener = await listen(gateway, `http://127.0.0.1:${port}/hook`, statePath);
    const ids = await postEsign(gateway, 3);
    await waitFor("a refused attempt", () => listener.lines.some((l) => /ECONNREFUSED .*retrying/.test(l)));
    expect(listener.delivered()).toEqual([]);

    const app = await receiver(port);
    await waitFor("three deliveries", () => listener.delivered().length === 3);
    const accepted = app.requests;
    expect(accepted.map((r) => r.headers["webhook-id"])).toEqual(ids);
    const webhook = new Webhook(listener.secret);
    for (const request of accepted) {
      const event = webhook.verify(request.body, request.headers) as { id: string; type: string };
      expect(event.type).toBe("agreement.completed");
    }
    expect(listener.delivered()[0]).toMatch(/agreement\.completed {2}agreements\/\S+ {2}200 {2}\d+ ms/);
    const state = JSON.parse(await readFile(statePath, "utf8"));
    expect(Number(state.cursor)).toBeGreaterThanOrEqual(3);
  });

  it("resumes after SIGKILL: events posted while it was dead arrive once, in order, same secret", async () => {
    const gateway = await startGateway();
    const app = await receiver();
    const statePath = join(await tempDir("gw-listen-state-"), "state.json");
    const first = await listen(gateway, app.url, statePath);
    const before = await postEsign(gateway, 2);
    await waitFor("two deliveries", () => first.delivered().length === 2);
    await first.kill("SIGKILL");

    const during = await postEsign(gateway, 3);
    const second = await listen(gateway, app.url, statePath);
    expect(second.secret).toBe(first.secret);
    const after = await postEsign(gateway, 1);
    await waitFor("six deliveries", () => app.requests.length >= 6 && second.delivered().length === 4);
    expect(app.ids()).toEqual([...before, ...during, ...after]);
  });

  it("upstream format: original bytes, re-signed in each service's scheme with the local secret", async () => {
    const gateway = await startGateway();
    const app = await receiver();
    const statePath = join(await tempDir("gw-listen-state-"), "state.json");
    const listener = await listen(gateway, app.url, statePath, ["--format", "upstream"]);
    const esign = await esignDelivery(gateway.secrets.esign);
    const staffing = await staffingDelivery(gateway.secrets.staffing);
    expect((await postWebhook(gateway.url, "esign", esign)).status).toBe(202);
    expect((await postWebhook(gateway.url, "staffing", staffing)).status).toBe(202);
    await waitFor("two deliveries", () => listener.delivered().length === 2);

    const crypto = createWebCrypto();
    const [first, second] = app.requests;
    expect(first?.body).toBe(new TextDecoder().decode(esign.body));
    expect(second?.body).toBe(new TextDecoder().decode(staffing.body));
    const esignCheck = await verifyEsignSignature(
      {
        signature: first?.headers["x-svc-signature"] ?? null,
        rawBody: utf8(first?.body ?? ""),
        secrets: [listener.secret],
      },
      crypto,
    );
    expect(esignCheck).toEqual({ ok: true });
    const staffingCheck = await verifyStaffingSignature(
      {
        signature: second?.headers["x-svc-signature"] ?? null,
        timestamp: second?.headers["x-svc-timestamp"] ?? null,
        rawBody: utf8(second?.body ?? ""),
        secrets: [listener.secret],
        toleranceSeconds: 300,
        nowSeconds: Math.floor(Date.now() / 1000),
      },
      crypto,
    );
    expect(staffingCheck).toEqual({ ok: true });
    expect(second?.headers["x-svc-delivery-id"]).toBe(staffing.headers["x-svc-delivery-id"]);
    // The gateway's own secret does not verify: the listener re-signed.
    const withGatewaySecret = await verifyEsignSignature(
      {
        signature: first?.headers["x-svc-signature"] ?? null,
        rawBody: utf8(first?.body ?? ""),
        secrets: [gateway.secrets.esign],
      },
      crypto,
    );
    expect(withGatewaySecret.ok).toBe(false);
  });
});
