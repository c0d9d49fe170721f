/**
 * The filter language through a real gateway process on the SQLite store, with events of both
 * services: routes with operators (and `filters` dialects, and `where`) deliver to real HTTP
 * receivers; `/ws` and `/stream` subscribers with a `filter` get exactly the matching events;
 * `GET /events?filter=` pages through matches with cursors; `POST /filters/test`, and replay by
 * filter with and without `dryRun`. Invalid filters answer 400 with the path to the bad part.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { makeDataDir, readDestinations } from "../delivery/helpers/process-fixtures.ts";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { defaultTestConfig, type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import {
  adminGet,
  adminKeyHash,
  esignDelivery,
  postWebhook,
  readAnswer,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { openReadyWs, syncClients, type WsClient } from "../stream/stream-fixtures.ts";
import { readSse } from "./sse-reader.ts";

/** A sample webhook body being edited before signing (fields of both services). */
type SampleBody = Record<string, unknown> & { result?: object; participants?: { email?: string }[] };

const CONFIDENT = { data: { result: { confidence: { $gte: 0.9 }, requiresReview: false } } };
const ORG_SIGNER = { data: { participants: { status: "signed", email: { $endsWith: "@example.org" } } } };

let gateway: GatewayProcess;
const receivers: Record<string, WebhookReceiver> = {};
const ids: Record<string, string> = {};
let ws: WsClient;
let sse: Awaited<ReturnType<typeof readSse>>;
const auth = () => ({ authorization: `Bearer ${gateway.secrets.adminKey}` });

async function post(kind: "esign" | "staffing", type: string, edit: (body: SampleBody) => void) {
  const delivery =
    kind === "esign"
      ? await esignDelivery(gateway.secrets.esign, type, { edit })
      : await staffingDelivery(gateway.secrets.staffing, type, { edit });
  const response = await postWebhook(gateway.url, kind, delivery);
  const body = (await response.json()) as { id: string };
  if (response.status !== 202) throw new Error(`webhook answered ${response.status}`);
  return body.id;
}

function postJson(path: string, body: unknown) {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { ...auth(), "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then(readAnswer);
}

const confidence =
  (value: number, requiresReview = false) =>
  (body: SampleBody) => {
    body.result = { ...body.result, confidence: value, requiresReview };
  };
const orgSigner = (body: SampleBody) => {
  const second = body.participants?.[1];
  if (!second) throw new Error("the e-sign sample has two participants");
  second.email = "erik.lind@example.org";
};

beforeAll(async () => {
  for (const id of ["big", "org", "legacy"]) receivers[id] = await startWebhookReceiver();
  const dataDir = await makeDataDir();
  const adminKey = `admin_${Date.now()}`;
  const hash = adminKeyHash(adminKey);
  gateway = await startGatewayProcess({
    dataDir,
    secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey },
    env: { TEST_WHSEC: makeWhsecSecret(), TEST_JWT_SECRET: "jwt-secret-for-filter-tests-0123456789" },
    config: {
      ...defaultTestConfig(dataDir, hash),
      store: { driver: "sqlite", dir: dataDir },
      clients: [{ id: "admin", apiKeyHashes: [hash], scopes: { stream: {} } }],
      auth: { jwt: { hs256Secret: "${TEST_JWT_SECRET}" } },
      destinations: [
        ...Object.entries(receivers).map(([id, r]) => ({
          id,
          type: "http",
          url: r.url,
          secrets: ["${TEST_WHSEC}"],
          allowCidrs: ["127.0.0.1/32"],
        })),
        { id: "live", type: "stream" },
      ],
      routes: [
        { id: "confident", services: ["staffing"], filter: CONFIDENT, destinations: ["big"] },
        {
          id: "org-signers",
          filters: [{ prefix: { type: "agreement." } }, { exact: { source: "/webhooks/esign" } }],
          filter: { ...ORG_SIGNER, headers: { "content-type": { $startsWith: "application/json" } } },
          destinations: ["org"],
        },
        { id: "legacy", where: { "data.status": ["declined"] }, destinations: ["legacy"] },
        { destinations: ["live"] },
      ],
    },
  });
  const wsFilter = { $or: [{ data: { result: { requiresReview: true } } }, ORG_SIGNER] };
  ws = await openReadyWs(
    `${gateway.url.replace(/^http/, "ws")}/ws?filter=${encodeURIComponent(JSON.stringify(wsFilter))}`,
    auth(),
  );
  const sseFilter = { $or: [{ data: { result: { confidence: { $lt: 0.9 } } } }, ORG_SIGNER] };
  sse = await readSse(`${gateway.url}/stream?filter=${encodeURIComponent(JSON.stringify(sseFilter))}`, auth());

  ids.s1 = await post("staffing", "candidate.accepted", confidence(0.96));
  ids.s2 = await post("staffing", "candidate.accepted", confidence(0.5));
  ids.s3 = await post("staffing", "candidate.accepted", confidence(0.95, true));
  ids.e2 = await post("esign", "agreement.completed", () => {});
  ids.e3 = await post("esign", "agreement.declined", (b) => {
    b.status = "declined";
  });
  ids.s4 = await post("staffing", "candidate.declined", confidence(0.99));
  // Last: matches the org route and both stream filters, so its arrival means all before it did.
  ids.e1 = await post("esign", "agreement.completed", orgSigner);
});

afterAll(async () => {
  ws?.ws.close();
  sse?.close();
  await gateway?.kill();
  for (const r of Object.values(receivers)) await r.close();
});

describe("routes", () => {
  it("deliver exactly the events their filters match, on both services", async () => {
    await waitFor("the last event at org", () => receivers.org?.ids().includes(ids.e1 as string) ?? false);
    await waitFor("every destination drained", async () =>
      (await readDestinations(gateway)).every((d) => d.backlog === 0),
    );
    expect([...(receivers.big?.ids() ?? [])].sort()).toEqual([ids.s1, ids.s4].sort());
    expect([...(receivers.org?.ids() ?? [])]).toEqual([ids.e1]);
    expect([...(receivers.legacy?.ids() ?? [])]).toEqual([ids.e3]);
  });
});

describe("live stream", () => {
  it("/ws?filter= gets the matching events only, in journal order", async () => {
    await ws.log.waitFor((f) => f.event?.id === ids.e1, "the last event");
    await syncClients(ws);
    expect(ws.log.eventIds()).toEqual([ids.s3, ids.e1]);
  });

  it("/stream?filter= (SSE) gets the matching events only", async () => {
    await sse.waitFor(ids.e1 as string);
    expect(sse.ids()).toEqual([ids.s2, ids.e1]);
  });

  it("a malformed filter is refused with the path to the bad part", async () => {
    const bad = encodeURIComponent(JSON.stringify({ data: { amount: { $gtx: 1 } } }));
    const response = await fetch(`${gateway.url}/stream?filter=${bad}`, { headers: auth() });
    const body = (await response.json()) as { error: { code: string; details: unknown } };
    expect(response.status).toBe(400);
    expect(JSON.stringify(body.error.details)).toContain("filter.data.amount.$gtx");
  });
});

describe("event log", () => {
  it("GET /events?filter= combines with other parameters and pages with cursors", async () => {
    const filter = encodeURIComponent(JSON.stringify({ data: { result: { confidence: { $gte: 0.9 } } } }));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await adminGet(
        gateway.url,
        `/events?source=staffing&filter=${filter}&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
        gateway.secrets.adminKey,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.events.map((e: { id: string }) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual([ids.s4, ids.s3, ids.s1]);

    const typed = await adminGet(
      gateway.url,
      `/events?type=candidate.accepted&filter=${filter}`,
      gateway.secrets.adminKey,
    );
    expect(typed.body.events.map((e: { id: string }) => e.id)).toEqual([ids.s3, ids.s1]);

    const arrays = encodeURIComponent(JSON.stringify(ORG_SIGNER));
    const org = await adminGet(gateway.url, `/events?filter=${arrays}`, gateway.secrets.adminKey);
    expect(org.body.events.map((e: { id: string }) => e.id)).toEqual([ids.e1]);
  });

  it("an invalid filter answers 400 invalid_request with details[].field", async () => {
    const bad = encodeURIComponent(JSON.stringify({ data: { amount: { $gtx: 1 } } }));
    const answer = await adminGet(gateway.url, `/events?filter=${bad}`, gateway.secrets.adminKey);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
    expect(answer.body.error.details).toEqual([expect.objectContaining({ field: "filter.data.amount.$gtx" })]);
    const notJson = await adminGet(gateway.url, "/events?filter=%7Bdata", gateway.secrets.adminKey);
    expect(notJson.status).toBe(400);
  });

  it("POST /filters/test counts the matches among the last events and names them", async () => {
    const answer = await postJson("/filters/test", { filter: { type: { $startsWith: "agreement." } } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ tested: 7, matched: 3 });
    expect(answer.body.events.map((e: { id: string }) => e.id)).toEqual([ids.e1, ids.e3, ids.e2]);
    const bad = await postJson("/filters/test", { filters: [{ exact: { type: 5 } }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ field: "filters.0.exact.type" })]);
  });
});

describe("replay by filter", () => {
  it("POST /events/replay with dryRun counts, without it replays", async () => {
    const dry = await postJson("/events/replay", { filter: { data: { status: "declined" } }, dryRun: true });
    expect(dry).toMatchObject({ status: 200, body: { dryRun: true, matched: 1 } });
    expect(receivers.legacy?.requests.length).toBe(1);

    const done = await postJson("/events/replay", { filter: { data: { status: "declined" } } });
    expect(done.status).toBe(202);
    expect(done.body.matched).toBe(1);
    await waitFor("the replayed event", () => (receivers.legacy?.requests.length ?? 0) >= 2);
    expect(receivers.legacy?.requests.map((r) => r.headers["webhook-id"])).toEqual([ids.e3, ids.e3]);
  });

  it("POST /destinations/{id}/replay narrows by filter; dryRun answers the count", async () => {
    const dry = await postJson("/destinations/big/replay", {
      states: ["delivered"],
      filter: { data: { result: { confidence: { $gte: 0.97 } } } },
      dryRun: true,
    });
    expect(dry).toMatchObject({ status: 200, body: { destination: "big", dryRun: true, matched: 1 } });
  });
});

describe("subscribe message and stream token (last: they post more events)", () => {
  it("a stream token minted with a filter narrows what its holder sees, whatever it subscribes to", async () => {
    const minted = await postJson("/auth/stream-token", { filter: { data: { result: { requiresReview: true } } } });
    expect(minted.status).toBe(201);
    const wsBase = `${gateway.url.replace(/^http/, "ws")}/ws`;
    const browser = await openReadyWs(`${wsBase}?type=candidate.*&token=${encodeURIComponent(minted.body.token)}`);
    await post("staffing", "candidate.accepted", confidence(0.9, false));
    const flagged = await post("staffing", "candidate.accepted", confidence(0.9, true));
    await browser.log.waitFor((f) => f.event?.id === flagged, "the flagged event");
    await syncClients(browser);
    expect(browser.log.eventIds()).toEqual([flagged]);
    browser.ws.close();
  });

  it("a WebSocket subscription with a content filter gets the matching events only", async () => {
    const client = await openReadyWs(`${gateway.url.replace(/^http/, "ws")}/ws`, auth());
    client.ws.send(JSON.stringify({ type: "unsubscribe" }));
    client.ws.send(
      JSON.stringify({ type: "subscribe", id: "declined", filter: { filter: { type: { $endsWith: ".declined" } } } }),
    );
    await client.log.waitFor((f) => f.type === "subscribed", "subscribed");
    await post("staffing", "candidate.accepted", confidence(0.9));
    const declined = await post("esign", "agreement.declined", () => {});
    await client.log.waitFor((f) => f.event?.id === declined, "the declined event");
    await syncClients(client);
    expect(client.log.eventIds()).toEqual([declined]);
    client.ws.close();
  });
});
