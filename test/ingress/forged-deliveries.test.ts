/**
 * "Nothing is written anywhere before the signature is verified": a burst of forged and hostile
 * deliveries against a real process leaves the event log and the journal file empty.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { utf8 } from "../../src/crypto/crypto-port.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  adminGet,
  esignDelivery,
  postWebhook,
  type SignedDelivery,
  signEsignBytes,
  signStaffingBytes,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { startGatewayWithTinySource } from "./gateway-fixtures.ts";

let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startGatewayWithTinySource();
});
afterAll(async () => {
  await gw.kill();
});

/** Hostile deliveries, each with the source it targets and the status it must get. */
async function hostileDeliveries(): Promise<[string, SignedDelivery, number][]> {
  const wrongSecret = "whsec_attacker_guess_0123456789";
  const esign = await esignDelivery(gw.secrets.esign);
  const staffing = await staffingDelivery(gw.secrets.staffing);
  const otherBody = utf8(JSON.stringify({ event_id: "evt-forged", event: "agreement.completed" }));
  const notJson = utf8("definitely not json");
  const noIdentity = utf8('{"event":"agreement.completed"}');
  const big = utf8(`{"event_id":"evt-big","pad":"${"x".repeat(4096)}"}`);
  return [
    ["esign", await esignDelivery(wrongSecret), 401],
    ["esign", { body: otherBody, headers: esign.headers }, 401],
    ["esign", { body: esign.body, headers: { "content-type": "application/json" } }, 401],
    ["esign", { body: esign.body, headers: { "x-svc-signature": `sha256=${"0".repeat(64)}` } }, 401],
    [
      "esign",
      { body: esign.body, headers: { "x-svc-signature": esign.headers["x-svc-signature"]!.toUpperCase() } },
      401,
    ],
    // A staffing signature on an e-sign source, and the reverse.
    ["esign", { body: staffing.body, headers: staffing.headers }, 401],
    ["staffing", { body: esign.body, headers: esign.headers }, 401],
    ["staffing", await staffingDelivery(wrongSecret), 401],
    [
      "staffing",
      await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { now: Date.now() - 3_600_000 }),
      401,
    ],
    [
      "staffing",
      await staffingDelivery(gw.secrets.staffing, "candidate.accepted", { now: Date.now() + 3_600_000 }),
      401,
    ],
    ["staffing", { body: staffing.body, headers: { ...staffing.headers, "x-svc-timestamp": "1" } }, 401],
    ["staffing", { body: staffing.body, headers: { "x-svc-signature": "t=1,v1=zz" } }, 401],
    ["nope", esign, 404],
    ["tiny", { body: big, headers: await signEsignBytes(gw.secrets.esign, big) }, 413],
    // Genuine signatures on bodies that cannot be recorded: verified, but still nothing written.
    ["esign", { body: notJson, headers: await signEsignBytes(gw.secrets.esign, notJson) }, 400],
    ["esign", { body: noIdentity, headers: await signEsignBytes(gw.secrets.esign, noIdentity) }, 400],
    ["staffing", { body: notJson, headers: await signStaffingBytes(gw.secrets.staffing, notJson) }, 400],
  ];
}

/** Bytes the sqlite store has written to disk (its database and write-ahead log). */
async function storeBytes(dir: string): Promise<number> {
  const sizes = await Promise.all(
    ["gateway.db", "gateway.db-wal"].map((file) =>
      stat(join(dir, file)).then(
        (s) => s.size,
        () => 0,
      ),
    ),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

it("records nothing for forged, stale, oversized or unparsable deliveries", async () => {
  const deliveries = await hostileDeliveries();
  const before = await storeBytes(gw.dataDir);
  // Each one three times, all at once.
  const burst = [...deliveries, ...deliveries, ...deliveries];
  const statuses = await Promise.all(
    burst.map(async ([source, delivery]) => (await postWebhook(gw.url, source, delivery)).status),
  );
  expect(statuses).toEqual(burst.map(([, , status]) => status));

  const { status, body } = await adminGet(gw.url, "/events?limit=500", gw.secrets.adminKey);
  expect(status).toBe(200);
  expect(body).toEqual({ events: [], next_cursor: null });
  expect(await storeBytes(gw.dataDir)).toBe(before);

  // The same process does record a genuine delivery, so the unchanged store above is meaningful.
  expect((await postWebhook(gw.url, "esign", await esignDelivery(gw.secrets.esign))).status).toBe(202);
  expect(await storeBytes(gw.dataDir)).toBeGreaterThan(before);
});
