/**
 * The log lines an operator alerts on (docs/operations-and-metrics.md "Alerting on logs"), read
 * from a real gateway process: a destination answering 500, one whose port refuses the
 * connection, one the SSRF guard refuses (127.0.0.1 without `allowPrivateNetworks`) and one
 * answering 410. Failed attempts are `warn` lines with the destination id and status or error,
 * at most one per destination per interval (`GATEWAY_LOG_ATTEMPT_INTERVAL_SECONDS`, the next line
 * counts the ones left out); dead letters are `warn`; a breaker that opens and a destination
 * disabled are `error`. At start, and again at a reload, the SSRF guard's refusal is a `warn`
 * naming `allowPrivateNetworks`. A webhook for an unknown source names the id asked for. No line
 * carries the event's content or a secret.
 */

import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, expect, test } from "vitest";
import { closedPort } from "../delivery/helpers/http-sink-fixture.ts";
import { makeWhsecSecret } from "../delivery/helpers/in-process-gateway.ts";
import { makeDataDir } from "../delivery/helpers/process-fixtures.ts";
import { startWebhookReceiver, type WebhookReceiver, waitLong } from "../delivery/helpers/webhook-receiver.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  logLinesWith,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
}, 240_000);

let gw: GatewayProcess;
let failing: WebhookReceiver;
let gone: WebhookReceiver;
let whsec: string;
let config: Record<string, unknown>;
const bodies: string[] = [];

const linesOf = (msg: string, destination?: string) => logLinesWith(gw.lines, msg, destination);

beforeAll(async () => {
  whsec = makeWhsecSecret();
  failing = await startWebhookReceiver(() => ({ status: 500 }));
  gone = await startWebhookReceiver(() => ({ status: 410 }));
  cleanup.push(
    () => failing.close(),
    () => gone.close(),
  );
  const dataDir = await makeDataDir();
  const secrets = makeSecrets();
  const loopback = { allowCidrs: ["127.0.0.1/32"] };
  const common = { type: "http", secrets: ["${TEST_WHSEC}"] };
  config = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    log: { level: "info" },
    destinations: [
      // Retries 100 ms apart and no breaker in the way: the 500 destination is attempted about
      // ten times per 1 s log interval, for at least 1.9 s per event (so a later line counts the
      // left-out ones however fast the machine), and ends dead after 20 attempts.
      {
        ...common,
        ...loopback,
        id: "failing",
        url: failing.url,
        retry: { schedule: Array(19).fill(0.1), jitter: 0 },
        breaker: { failures: 1000 },
      },
      // Its breaker opens after 3 failures in a row.
      {
        ...common,
        ...loopback,
        id: "refusing",
        url: `http://127.0.0.1:${await closedPort()}/hook`,
        retry: { schedule: [0.02, 0.02], jitter: 0 },
        breaker: { failures: 3 },
      },
      // 127.0.0.1 without allowPrivateNetworks: the SSRF guard refuses it.
      { ...common, id: "guarded", url: "http://127.0.0.1:9/hook" },
      { ...common, ...loopback, id: "gone", url: gone.url },
    ],
    routes: [{ sources: ["esign"], destinations: ["failing", "refusing", "guarded", "gone"] }],
  };
  gw = await startGatewayProcess({
    config,
    dataDir,
    secrets,
    env: { TEST_WHSEC: whsec, GATEWAY_LOG_ATTEMPT_INTERVAL_SECONDS: "1" },
  });
  cleanup.push(() => gw.kill());
  for (let i = 0; i < 3; i++) {
    const delivery = await esignDelivery(gw.secrets.esign, "agreement.completed");
    bodies.push(Buffer.from(delivery.body).toString("utf8"));
    expect((await postWebhook(gw.url, "esign", delivery)).status).toBe(202);
  }
}, 240_000);

test("at start, a warn names the destination the SSRF guard will refuse and allowPrivateNetworks", async () => {
  await waitLong(
    "the SSRF warning",
    () => linesOf("destination address refused by the SSRF guard; its deliveries will fail").length > 0,
  );
  const [line, ...more] = linesOf("destination address refused by the SSRF guard; its deliveries will fail");
  expect(more).toEqual([]);
  expect(line).toMatchObject({ level: "warn", destination: "guarded", host: "127.0.0.1", reason: "loopback address" });
  expect(line?.hint).toContain("allowPrivateNetworks");
}, 240_000);

test("failed attempts are warn lines with the destination and its status or error", async () => {
  await waitLong("warn lines of three destinations", () =>
    ["failing", "refusing", "guarded"].every((id) => linesOf("delivery attempt failed", id).length > 0),
  );
  const [failed] = linesOf("delivery attempt failed", "failing");
  expect(failed).toMatchObject({ level: "warn", destination: "failing", status: 500, error: "HTTP 500" });
  const [refused] = linesOf("delivery attempt failed", "refusing");
  expect(refused).toMatchObject({ level: "warn", destination: "refusing" });
  expect(refused?.error).toMatch(/ECONNREFUSED/);
  const [guarded] = linesOf("delivery attempt failed", "guarded");
  expect(guarded).toMatchObject({ level: "warn", destination: "guarded" });
  expect(guarded?.error).toMatch(/^refused by the SSRF guard/);
  expect(guarded?.hint).toContain("allowPrivateNetworks");
}, 240_000);

test("the failed-attempt lines of one destination are rate-limited and count what they left out", async () => {
  await waitLong("a line counting suppressed attempts", () =>
    linesOf("delivery attempt failed", "failing").some((l) => (l.suppressed ?? 0) > 0),
  );
  const lines = linesOf("delivery attempt failed", "failing");
  const failedAttempts = failing.requests.length;
  // 3 events x 20 attempts each, 100 ms apart, one line per second: far fewer lines.
  expect(lines.length).toBeLessThan(failedAttempts);
  const counted = lines.reduce((sum, l) => sum + 1 + (l.suppressed ?? 0), 0);
  expect(counted).toBeLessThanOrEqual(failedAttempts);
}, 240_000);

test("dead letters are warn, an opened breaker and a disabled destination are error", async () => {
  await waitLong(
    "dead letters of the guarded destination",
    () => linesOf("delivery dead-lettered", "guarded").length > 0,
  );
  expect(linesOf("delivery dead-lettered", "guarded")[0]).toMatchObject({ level: "warn", destination: "guarded" });
  await waitLong(
    "the 500 destination dead-lettered",
    () => linesOf("delivery dead-lettered", "failing").length > 0,
    60_000,
  );
  expect(linesOf("delivery dead-lettered", "failing")[0]).toMatchObject({ level: "warn", status: 500 });
  await waitLong(
    "the breaker line",
    () => linesOf("destination failing: circuit breaker open", "refusing").length > 0,
    90_000,
  );
  const [opened, ...again] = linesOf("destination failing: circuit breaker open", "refusing");
  expect(opened).toMatchObject({ level: "error", destination: "refusing" });
  expect(opened?.error).toMatch(/ECONNREFUSED/);
  // One line when it opens, not one per failed probe.
  expect(again).toEqual([]);
  await waitLong("the disabled line", () => linesOf("destination disabled", "gone").length > 0, 90_000);
  expect(linesOf("destination disabled", "gone")[0]).toMatchObject({ level: "error", destination: "gone" });
}, 240_000);

test("a webhook for an unknown source names the id asked for, bounded", async () => {
  const long = `x${"y".repeat(300)}`;
  for (const id of ["no-such-source", long]) {
    const delivery = await esignDelivery(gw.secrets.esign, "agreement.completed");
    expect((await postWebhook(gw.url, "esign-typo", delivery)).status).toBe(404);
    expect((await postWebhook(gw.url, id, delivery)).status).toBe(404);
  }
  await waitLong("the rejection lines", () => linesOf("webhook rejected").length >= 4, 90_000);
  // The id asked for is `requested_source` when no source has it (docs/operations-and-metrics.md).
  const sources = linesOf("webhook rejected").map((l) => (l.requested_source ?? l.source) as string);
  expect(sources).toContain("no-such-source");
  expect(sources).toContain("esign-typo");
  const bounded = sources.find((s) => s.startsWith("xyyy"));
  expect(bounded?.length).toBeLessThanOrEqual(65);
}, 240_000);

test("a reload warns again about the refused destination; no line carries a secret or event content", async () => {
  const mark = gw.lines.length;
  // A changed file (log-irrelevant tweak of the guarded destination) reloads and re-checks.
  const destinations = (config.destinations as Record<string, unknown>[]).map((d) =>
    d.id === "guarded" ? { ...d, timeoutSeconds: 5 } : d,
  );
  await writeFile(gw.configPath, JSON.stringify({ ...config, destinations }));
  gw.child.kill("SIGHUP");
  await waitLong("the SSRF warning after the reload", () =>
    gw.lines
      .slice(mark)
      .some((l) => l.includes("destination address refused by the SSRF guard") && l.includes('"guarded"')),
  );
  expect(gw.lines.slice(mark).some((l) => l.includes('"msg":"configuration reloaded"'))).toBe(true);

  const all = gw.lines.join("\n");
  expect(all).not.toContain(whsec);
  expect(all).not.toContain(gw.secrets.esign);
  for (const body of bodies) {
    const { event_id: eventId } = JSON.parse(body) as { event_id: string };
    // The upstream's own body never appears (its event id is part of the content).
    expect(all).not.toContain(body);
    expect(all).not.toContain(eventId);
  }
}, 240_000);
