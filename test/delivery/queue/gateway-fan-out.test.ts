/**
 * End to end through a real gateway process: signed webhooks in, routed by the configured
 * routes to a Redis Streams queue (real redis-server) and to e-mail (real SMTP server). The
 * stream entry and the mail carry the gateway event id; a destination that was down receives
 * the event once it is back, through the engine's retries.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readStreamFields } from "../../../src/delivery/queue/build-stream-entry.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../../helpers/gateway-process.ts";
import { type RedisServer, startRedisServer } from "../../helpers/redis-server.ts";
import {
  adminGet,
  adminKeyHash,
  esignDelivery,
  type JsonAnswer,
  postWebhook,
  staffingDelivery,
} from "../../helpers/signed-requests.ts";
import { type SmtpTestServer, startSmtpServer } from "../../helpers/smtp-server.ts";

let redis: RedisServer;
let smtp: SmtpTestServer;
let gateway: GatewayProcess;
let reader: Redis;
const STREAM = "gateway:events";

function openReader(): Redis {
  return new Redis(redis.url).on("error", () => undefined);
}

/** Blocks on the stream (XREAD BLOCK) until an entry for `eventId` arrives after `after`. */
async function readEntryFor(eventId: string, after = "0-0", timeoutMs = 15_000): Promise<Record<string, string>> {
  const deadline = Date.now() + timeoutMs;
  let cursor = after;
  while (Date.now() < deadline) {
    const answer = (await reader.xread("COUNT", 100, "BLOCK", 1_000, "STREAMS", STREAM, cursor)) as
      | [string, [string, string[]][]][]
      | null;
    for (const [entryId, flat] of answer?.[0]?.[1] ?? []) {
      cursor = entryId;
      const fields = readStreamFields(flat);
      if (fields.id === eventId) return fields;
    }
  }
  throw new Error(`no stream entry for ${eventId} within ${timeoutMs} ms`);
}

/** The event's delivery to `destination` from `GET /events/{id}`, once `done` says so (bounded). */
async function deliveryWhen(eventId: string, destination: string, done: (delivery: JsonAnswer) => boolean) {
  for (let i = 0; i < 300; i++) {
    const { body } = await adminGet(gateway.url, `/events/${eventId}`, gateway.secrets.adminKey);
    const delivery = (body.deliveries as JsonAnswer[] | undefined)?.find((d) => d.destination === destination);
    if (delivery && done(delivery)) return delivery;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`delivery of ${eventId} to ${destination} never reached the expected state`);
}

beforeAll(async () => {
  [redis, smtp] = await Promise.all([startRedisServer(), startSmtpServer()]);
  reader = openReader();
  const secrets = makeSecrets();
  const config = defaultTestConfig("", adminKeyHash(secrets.adminKey)) as Record<string, unknown>;
  config.store = { driver: "memory" };
  config.destinations = [
    {
      id: "jobs",
      type: "queue",
      url: "${TEST_REDIS_URL}",
      stream: STREAM,
      maxLen: 1_000,
      timeoutMs: 1_000,
      // Quick retries and no breaker pause, so that recovery shows within the test.
      retry: { schedule: [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2], jitter: 0 },
      breaker: { failures: 1_000 },
    },
    {
      id: "ops-mail",
      type: "email",
      host: "127.0.0.1",
      allowPrivateNetworks: true,
      port: smtp.port,
      from: "Gateway <gateway@example.com>",
      to: ["ops@example.com"],
      toFields: ["data.participant.email"],
    },
  ];
  config.routes = [
    { types: ["agreement.*"], destinations: ["jobs"] },
    { types: ["agreement.completed", "candidate.accepted"], destinations: ["ops-mail"] },
  ];
  gateway = await startGatewayProcess({ config, secrets, env: { TEST_REDIS_URL: redis.url } });
});

afterAll(async () => {
  await gateway?.kill();
  reader?.disconnect();
  await Promise.all([redis?.stop(), smtp?.close()]);
});

describe("fan-out to queue and e-mail", () => {
  it("an agreement.completed webhook reaches the stream and the mailbox with the gateway event id", async () => {
    const response = await postWebhook(
      gateway.url,
      "esign",
      await esignDelivery(gateway.secrets.esign, "agreement.completed"),
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };

    const entry = await readEntryFor(id);
    expect(entry).toMatchObject({ id, type: "agreement.completed", source: "/webhooks/esign" });
    expect(JSON.parse(entry.payload as string)).toMatchObject({ specversion: "1.0", id, type: "agreement.completed" });

    const [mail] = await smtp.waitForMessages(1);
    expect(mail?.parsed.messageId).toBe(`<${id}.ops-mail@gateway>`);
    expect(mail?.parsed.subject).toBe("Agreement completed: crm-deal-4711");
    expect(mail?.envelope.to).toEqual(["ops@example.com", "anna.svensson@example.com"]);
  });

  it("a staffing candidate.accepted goes only where its route says (mail, not the agreement queue)", async () => {
    const before = smtp.messages.length;
    const response = await postWebhook(
      gateway.url,
      "staffing",
      await staffingDelivery(gateway.secrets.staffing, "candidate.accepted"),
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const mails = await smtp.waitForMessages(before + 1);
    const mail = mails.at(-1);
    expect(mail?.parsed.headers.get("x-gateway-event-id")).toBe(id);
    expect(mail?.parsed.subject).toBe("Candidate accepted: Karin Berg for shift-2026-11-24-night-ward3");
    // No participant e-mail in a staffing body: only the static recipient.
    expect(mail?.envelope.to).toEqual(["ops@example.com"]);
    const entries = await reader.xrange(STREAM, "-", "+");
    expect(entries.map(([, flat]) => readStreamFields(flat).id)).not.toContain(id);
  });

  it("Redis down while an event arrives: delivered once it is back, exactly once", async () => {
    reader.disconnect();
    await redis.stop();
    const response = await postWebhook(
      gateway.url,
      "esign",
      await esignDelivery(gateway.secrets.esign, "agreement.declined"),
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    // Restart only once the log shows attempts that failed against the dead server.
    await deliveryWhen(id, "jobs", (d) => d.failures >= 2);

    redis = await startRedisServer({ port: redis.port });
    reader = openReader();
    const entry = await readEntryFor(id);
    expect(entry.type).toBe("agreement.declined");
    const delivered = await deliveryWhen(id, "jobs", (d) => d.state === "delivered");
    const attempts = delivered.attempts as JsonAnswer[];
    expect(attempts.at(-1)).toMatchObject({ ok: true });
    expect(attempts.slice(0, -1).every((a) => !a.ok && /unreachable/.test(a.error))).toBe(true);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    const ids = (await reader.xrange(STREAM, "-", "+")).map(([, flat]) => readStreamFields(flat).id);
    expect(ids.filter((eventId) => eventId === id)).toHaveLength(1);
  });
});
