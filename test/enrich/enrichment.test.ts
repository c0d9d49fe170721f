/**
 * Enrichment end to end: a real gateway process whose routes ask for enrichment, the upstream
 * emulators behind the configured upstreams, and real destinations: a signed HTTP receiver, the
 * live stream over WebSocket, and a real SMTP server whose template reads enrichment fields.
 * Checked: the agreement and the staffing request are attached; one fetch per subject while
 * cached; an unknown resource and a hanging upstream deliver the event unenriched and marked,
 * within the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import {
  type EsignServer,
  type StaffingServer,
  startEsignEmulator,
  startStaffingEmulator,
} from "../helpers/emulators.ts";
import { type GatewayProcess, makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, type JsonAnswer, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import { type SmtpTestServer, startSmtpServer } from "../helpers/smtp-server.ts";
import { liveConfig, tempDir } from "../listen/listen-fixtures.ts";

let esign: EsignServer;
let staffing: StaffingServer;
let app: WebhookReceiver;
let smtp: SmtpTestServer;
let gateway: GatewayProcess;
let socket: WebSocket;
const streamed: JsonAnswer[] = [];

beforeAll(async () => {
  [esign, staffing, app, smtp] = await Promise.all([
    startEsignEmulator(),
    startStaffingEmulator(),
    startWebhookReceiver(),
    startSmtpServer(),
  ]);
  const secrets = makeSecrets();
  const dataDir = await tempDir("gw-enrich-");
  const config = liveConfig(dataDir, secrets.adminKey, {
    upstreams: [
      { id: "esign", service: "esign", baseUrl: esign.baseUrl, clientId: "${T_CID}", clientSecret: "${T_CSECRET}" },
      { id: "staffing", service: "staffing", baseUrl: staffing.baseUrl, apiKey: "${T_SKEY}" },
    ],
    destinations: [
      { id: "live", type: "stream" },
      {
        id: "crm",
        type: "http",
        url: app.url,
        secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
        allowCidrs: ["127.0.0.1/32"],
      },
      {
        id: "mail",
        type: "email",
        host: "127.0.0.1",
        allowPrivateNetworks: true,
        port: smtp.port,
        from: "gateway@example.com",
        to: ["ops@example.com"],
        templates: {
          "agreement.*": {
            subject: '{{type}}: {{enrichment.data.title | "no title"}}',
            text: "{{enrichment.data.status | enrichmenterror}}",
          },
        },
      },
    ],
    routes: [
      // The bound leaves room for a cold process's first token fetch on a loaded machine; the
      // hanging upstream below still has to hit it.
      { sources: ["esign"], destinations: ["crm", "live"], enrich: { ttlSeconds: 60, timeoutMs: 2_000 } },
      { sources: ["esign"], types: ["agreement.completed"], destinations: ["mail"], enrich: true },
      { sources: ["staffing"], destinations: ["crm"], enrich: true },
    ],
  });
  gateway = await startGatewayProcess({
    config,
    dataDir,
    secrets,
    env: { T_CID: esign.client.clientId, T_CSECRET: esign.client.clientSecret, T_SKEY: staffing.apiKey },
  });
  socket = new WebSocket(`${gateway.url.replace("http", "ws")}/ws`, {
    headers: { authorization: `Bearer ${secrets.adminKey}` },
  });
  socket.on("message", (data) => {
    const frame = JSON.parse(String(data));
    if (frame.type === "event") streamed.push(frame.event);
  });
  await new Promise((resolve) => socket.once("message", resolve));
});

afterAll(async () => {
  socket?.close();
  await gateway?.kill();
  await Promise.all([esign?.close(), staffing?.close(), app?.close(), smtp?.close()]);
});

async function post(delivery: Promise<Awaited<ReturnType<typeof esignDelivery>>>, source = "esign") {
  const response = await postWebhook(gateway.url, source, await delivery);
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

const delivered = (id: string): JsonAnswer | undefined => {
  const request = app.requests.find((r) => r.headers["webhook-id"] === id);
  return request && JSON.parse(request.body);
};

describe("enrichment", () => {
  it("attaches the agreement to HTTP, stream and mail deliveries; one fetch per subject while cached", async () => {
    const agreementId = await esign.createAgreement("Lease, unit 12");
    const first = await post(esignDelivery(gateway.secrets.esign, "agreement.completed", { subjectId: agreementId }));
    const second = await post(esignDelivery(gateway.secrets.esign, "agreement.viewed", { subjectId: agreementId }));
    await waitFor("both events at the app", () => Boolean(delivered(first) && delivered(second)));
    const event = delivered(first);
    expect(event.enrichment).toMatchObject({
      upstream: "esign",
      path: `/agreements/${agreementId}`,
      data: { id: agreementId, title: "Lease, unit 12" },
    });
    expect(Date.parse(event.enrichment.fetchedtime)).not.toBeNaN();
    expect(event.enrichmenterror).toBeUndefined();
    expect(delivered(second).enrichment.data.title).toBe("Lease, unit 12");
    expect(esign.count("GET", `/agreements/${agreementId}`)).toBe(1);

    await waitFor(
      "both events on the stream",
      () => streamed.filter((e) => e.id === first || e.id === second).length === 2,
    );
    expect(streamed.find((e) => e.id === first).enrichment.data.title).toBe("Lease, unit 12");

    const [mail] = await smtp.waitForMessages(1);
    expect(mail?.parsed.subject).toBe("agreement.completed: Lease, unit 12");

    // The journal keeps the event as received.
    const logged = await fetch(`${gateway.url}/events/${first}`, {
      headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
    });
    expect(((await logged.json()) as JsonAnswer).event.enrichment).toBeUndefined();
  });

  it("attaches the staffing request", async () => {
    const created = await fetch(`${staffing.baseUrl}/staffing-requests`, {
      method: "POST",
      headers: { authorization: `Bearer ${staffing.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        externalId: "shift-enrich-1",
        shift: {
          id: "shift-1",
          startTime: "2026-12-01T07:00:00+01:00",
          endTime: "2026-12-01T15:00:00+01:00",
          location: "Ward 4",
          role: "Nurse",
        },
        candidates: [{ id: "c1", name: "A", phone: "+46700000000", priority: 1 }],
        webhookUrl: "http://127.0.0.1:9/hook" /* refused: the emulator's webhooks stay on loopback */,
      }),
    });
    const { staffingRequestId } = (await created.json()) as { staffingRequestId: string };
    const id = await post(
      staffingDelivery(gateway.secrets.staffing, "candidate.accepted", { subjectId: staffingRequestId }),
      "staffing",
    );
    await waitFor("the event at the app", () => Boolean(delivered(id)));
    expect(delivered(id).enrichment).toMatchObject({
      upstream: "staffing",
      path: `/staffing-requests/${staffingRequestId}`,
      data: { id: staffingRequestId, status: "queued" },
    });
  });

  it("an unknown agreement or a hanging upstream: delivered unenriched and marked", async () => {
    const missing = await post(
      esignDelivery(gateway.secrets.esign, "agreement.sent", { subjectId: "no-such-agreement" }),
    );
    const slowId = await esign.createAgreement("Slow");
    esign.inject({ method: "GET", path: `/agreements/${slowId}`, fault: { hang: true } });
    const slow = await post(esignDelivery(gateway.secrets.esign, "agreement.sent", { subjectId: slowId }));
    await waitFor("both events at the app", () => Boolean(delivered(missing) && delivered(slow)));
    expect(delivered(missing)).toMatchObject({ enrichmenterror: "status_404" });
    expect(delivered(missing).enrichment).toBeUndefined();
    expect(delivered(slow)).toMatchObject({ enrichmenterror: "timeout" });
    await waitFor("the slow one on the stream", () => streamed.some((e) => e.id === slow));
    expect(streamed.find((e) => e.id === slow).enrichmenterror).toBe("timeout");
  });

  it("a resource larger than the bound: delivered unenriched and marked too_large", async () => {
    const bigId = await esign.createAgreement("Big");
    const padding = "x".repeat(300 * 1024);
    esign.inject({ method: "GET", path: `/agreements/${bigId}`, fault: { status: 200, body: { id: bigId, padding } } });
    const big = await post(esignDelivery(gateway.secrets.esign, "agreement.sent", { subjectId: bigId }));
    await waitFor("the event at the app", () => Boolean(delivered(big)));
    expect(delivered(big)).toMatchObject({ enrichmenterror: "too_large" });
    expect(delivered(big).enrichment).toBeUndefined();
  });

  it("an id that is not one safe path segment is not fetched: delivered marked invalid_id", async () => {
    const esignBefore = esign.seen.length;
    const staffingBefore = staffing.seen.length;
    const ids: string[] = [];
    for (const subjectId of [".", "..", "a/../..", "%2e%2e", "ag\u0000x"]) {
      ids.push(await post(esignDelivery(gateway.secrets.esign, "agreement.sent", { subjectId })));
    }
    for (const requestId of ["..", "x/..", "."]) {
      const delivery = staffingDelivery(gateway.secrets.staffing, "candidate.accepted", {
        edit: (body) => {
          body.staffingRequestId = requestId;
        },
      });
      ids.push(await post(delivery, "staffing"));
    }
    await waitFor("every event at the app", () => ids.every((id) => delivered(id) !== undefined));
    for (const id of ids) {
      expect(delivered(id), JSON.stringify(delivered(id)?.data)).toMatchObject({ enrichmenterror: "invalid_id" });
      expect(delivered(id).enrichment).toBeUndefined();
    }
    // Neither the list endpoint nor the API root (nor anything else) was asked.
    expect(esign.seen.slice(esignBefore).filter((r) => r.method === "GET")).toEqual([]);
    expect(staffing.seen.slice(staffingBefore).filter((r) => r.method === "GET")).toEqual([]);
  });

  it("an answer nested deeper than the JSON bound: delivered unenriched and marked invalid_body", async () => {
    const deepId = await esign.createAgreement("Deep");
    let nested: unknown = 1;
    for (let i = 0; i < 200; i++) nested = [nested];
    esign.inject({
      method: "GET",
      path: `/agreements/${deepId}`,
      fault: { status: 200, body: { id: deepId, nested } },
    });
    const deep = await post(esignDelivery(gateway.secrets.esign, "agreement.sent", { subjectId: deepId }));
    await waitFor("the event at the app", () => Boolean(delivered(deep)));
    expect(delivered(deep)).toMatchObject({ enrichmenterror: "invalid_body" });
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  });
});
