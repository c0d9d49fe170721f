/**
 * The SSRF guard on email destinations, through a real gateway process and a real SMTP server
 * on 127.0.0.1: an email destination whose SMTP host is loopback without `allowPrivateNetworks`
 * is named in a `warn` at start (and again at a reload) with the setting that allows it, its
 * deliveries dead-letter with the guard's refusal and nothing reaches the server; the same
 * server with `allowPrivateNetworks: true` gets its mail. An `http-email` destination whose URL
 * is a loopback IP literal is refused the same way.
 */

import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, expect, test } from "vitest";
import { makeDataDir } from "../delivery/helpers/process-fixtures.ts";
import { waitLong } from "../delivery/helpers/webhook-receiver.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  logLinesWith,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { type SmtpTestServer, startSmtpServer } from "../helpers/smtp-server.ts";

const WARN = "destination address refused by the SSRF guard; its deliveries will fail";

let gw: GatewayProcess;
let smtp: SmtpTestServer;
let config: Record<string, unknown>;
let eventIds: string[] = [];

const linesOf = (msg: string, destination?: string) => logLinesWith(gw.lines, msg, destination);

/** Message-IDs are `<{eventId}.{destinationId}@gateway>`: the destination each mail came from. */
const mailsOf = (destination: string) =>
  smtp.messages.filter((mail) => mail.parsed.messageId?.endsWith(`.${destination}@gateway>`));

beforeAll(async () => {
  smtp = await startSmtpServer();
  const dataDir = await makeDataDir();
  const secrets = makeSecrets();
  const mail = { type: "email", from: "Gateway <gateway@example.com>", to: ["ops@example.com"] };
  config = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    log: { level: "info" },
    destinations: [
      { ...mail, id: "guarded-mail", host: "127.0.0.1", port: smtp.port },
      { ...mail, id: "relay-mail", host: "127.0.0.1", port: smtp.port, allowPrivateNetworks: true },
      {
        ...mail,
        id: "guarded-api",
        transport: "http-email",
        url: "http://127.0.0.1:9/v1/send",
        apiKey: "${TEST_MAIL_API_KEY}",
      },
    ],
    routes: [{ sources: ["esign"], destinations: ["guarded-mail", "relay-mail", "guarded-api"] }],
  };
  gw = await startGatewayProcess({
    config,
    dataDir,
    secrets,
    env: {
      TEST_MAIL_API_KEY: "mail_api_key_0123456789",
      // Every failed attempt and dead letter gets its line (no per-destination rate limit).
      GATEWAY_LOG_ATTEMPT_INTERVAL_SECONDS: "0",
    },
  });
  eventIds = [];
  for (let i = 0; i < 2; i++) {
    const response = await postWebhook(gw.url, "esign", await esignDelivery(gw.secrets.esign, "agreement.completed"));
    expect(response.status).toBe(202);
    eventIds.push(((await response.json()) as { id: string }).id);
  }
}, 240_000);

afterAll(async () => {
  await gw?.kill();
  await smtp?.close();
}, 60_000);

test("at start, a warn names each email destination the guard refuses and allowPrivateNetworks", async () => {
  await waitLong("both SSRF warnings", () => linesOf(WARN).length >= 2);
  const lines = linesOf(WARN);
  expect(lines.map((l) => l.destination).sort()).toEqual(["guarded-api", "guarded-mail"]);
  for (const line of lines) {
    expect(line).toMatchObject({ level: "warn", host: "127.0.0.1", reason: "loopback address" });
    expect(line.hint).toContain("allowPrivateNetworks");
  }
}, 240_000);

test("the refused destinations dead-letter with the guard's refusal; nothing reaches the SMTP server", async () => {
  await waitLong("relay-mail's mails", () => mailsOf("relay-mail").length === eventIds.length);
  for (const destination of ["guarded-mail", "guarded-api"]) {
    await waitLong(`${destination} dead-lettered`, () => linesOf("delivery dead-lettered", destination).length >= 2);
    for (const line of linesOf("delivery dead-lettered", destination)) {
      expect(line.level).toBe("warn");
      expect(line.error).toMatch(/^refused by the SSRF guard \(.*loopback address\)$/);
    }
  }
  expect(linesOf("delivery dead-lettered", "guarded-mail")[0]?.error).toBe(
    "refused by the SSRF guard (127.0.0.1 resolves to a loopback address)",
  );
  expect(mailsOf("guarded-mail")).toEqual([]);
  expect(
    mailsOf("relay-mail")
      .map((m) => m.parsed.messageId)
      .sort(),
  ).toEqual(eventIds.map((id) => `<${id}.relay-mail@gateway>`).sort());
  expect(smtp.messages).toHaveLength(eventIds.length);
}, 240_000);

test("a reload warns again for an email destination added without allowPrivateNetworks", async () => {
  const destinations = config.destinations as Record<string, unknown>[];
  const added = { ...destinations[1], id: "late-mail", allowPrivateNetworks: false };
  await writeFile(gw.configPath, JSON.stringify({ ...config, destinations: [...destinations, added] }));
  gw.child.kill("SIGHUP");
  await waitLong("the SSRF warning of late-mail", () => linesOf(WARN, "late-mail").length > 0);
  const [line] = linesOf(WARN, "late-mail");
  expect(line).toMatchObject({ level: "warn", host: "127.0.0.1", reason: "loopback address" });
  expect(line?.hint).toContain("allowPrivateNetworks");
}, 240_000);
