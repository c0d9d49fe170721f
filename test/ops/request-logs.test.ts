/**
 * Logs of a real process at level info: every stdout line is a JSON object, every webhook
 * request is logged with its request id (the one it was given or the one it was answered
 * with), and no line carries a secret, a signature or body content.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { utf8 } from "../../src/crypto/crypto-port.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  esignDelivery,
  postWebhook,
  type SignedDelivery,
  signEsignBytes,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "../ingress/gateway-fixtures.ts";

let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startEditedGatewayProcess(
    (config) => {
      config.log = { level: "info" };
    },
    // Set so that the CLI generates no development secrets (and prints no banner for them).
    { env: { ESIGN_WEBHOOK_SECRET: "unused", STAFFING_WEBHOOK_SECRET: "unused", GATEWAY_ADMIN_KEY_HASH: "unused" } },
  );
});
afterAll(async () => {
  await gw.kill();
});

/** Resolves once a stdout line satisfies `predicate` (bounded by `timeoutMs`). */
async function waitForLine(predicate: (line: string) => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!gw.lines.some(predicate)) {
    if (Date.now() > deadline) throw new Error(`no such log line within ${timeoutMs} ms:\n${gw.lines.join("\n")}`);
    // Woken by the next output of the process (lines are split on it), or re-checked shortly.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 50);
      gw.child.stdout!.once("data", () => {
        clearTimeout(timer);
        setImmediate(resolve);
      });
    });
  }
}

it("logs each webhook request with a requestId and never secrets or body content", async () => {
  const { esign, staffing } = gw.secrets;
  const canary = `canary-${crypto.randomUUID()}`;
  const edit = (body: Record<string, unknown>) => {
    body.note = canary;
  };
  const e1 = await esignDelivery(esign, "agreement.signed", { edit });
  const s1 = await staffingDelivery(staffing, "candidate.responded", { edit });
  const notJson = utf8(`not json ${canary}`);
  const plan: [string, SignedDelivery, string | undefined][] = [
    ["esign", e1, "req-given-1"],
    ["esign", e1, undefined],
    ["staffing", s1, undefined],
    ["esign", await esignDelivery("whsec_wrong_secret_0123456789", "agreement.sent", { edit }), "req-forged"],
    ["esign", { body: notJson, headers: await signEsignBytes(esign, notJson) }, undefined],
    [
      "staffing",
      await staffingDelivery(staffing, "candidate.accepted", { edit, now: Date.now() - 3_600_000 }),
      undefined,
    ],
    ["unknown-source", e1, undefined],
  ];
  const requestIds: string[] = [];
  for (const [source, delivery, given] of plan) {
    const response = await postWebhook(gw.url, source, delivery, given ? { "x-request-id": given } : {});
    await response.arrayBuffer();
    const id = response.headers.get("x-request-id");
    expect(id).toBeTruthy();
    if (given) expect(id).toBe(given);
    requestIds.push(id!);
  }
  // Admin requests with a wrong and a right key: neither key may be logged.
  await fetch(`${gw.url}/events`, { headers: { authorization: "Bearer wrong-admin-key-0123456789" } });
  await fetch(`${gw.url}/events`, { headers: { authorization: `Bearer ${gw.secrets.adminKey}` } });

  // Lines are written before each answer goes out; the last request's line closes the set.
  await waitForLine((line) => line.includes(requestIds.at(-1)!));
  const logs = gw.lines.map((line) => {
    expect(() => JSON.parse(line), line).not.toThrow();
    return JSON.parse(line) as Record<string, unknown>;
  });
  for (const id of requestIds) {
    expect(logs.some((entry) => entry.requestId === id)).toBe(true);
  }
  const webhookLines = logs.filter((entry) => String(entry.msg).startsWith("webhook"));
  expect(webhookLines.length).toBeGreaterThanOrEqual(plan.length);
  for (const entry of webhookLines) expect(entry.requestId).toEqual(expect.any(String));
  expect(logs.some((entry) => entry.level === "info" && entry.msg === "webhook accepted")).toBe(true);

  const everything = gw.lines.join("\n");
  for (const secret of Object.values(gw.secrets)) expect(everything).not.toContain(secret);
  expect(everything).not.toContain("wrong-admin-key-0123456789");
  for (const bodyText of [canary, "Anna Svensson", "anna.svensson@example.com", "Karin Berg", "+46701234567"]) {
    expect(everything).not.toContain(bodyText);
  }
  for (const [, delivery] of plan) {
    const signature = delivery.headers["x-svc-signature"];
    if (signature) expect(everything).not.toContain(signature.replace(/^.*=/, ""));
  }
});
