/**
 * Transforms on `queue` and `email` destinations in a real gateway process (real redis-server,
 * real SMTP server): the stream entry's `payload` is the transform's JSON while `id`, `type` and
 * `source` stay the event's, and an email destination's templates render the returned object.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readStreamFields } from "../../src/delivery/queue/build-stream-entry.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { type SmtpTestServer, startSmtpServer } from "../helpers/smtp-server.ts";

const STREAM = "gateway:transformed";
let redis: RedisServer;
let smtp: SmtpTestServer;
let gateway: GatewayProcess;
let reader: Redis;

beforeAll(async () => {
  [redis, smtp] = await Promise.all([startRedisServer(), startSmtpServer()]);
  reader = new Redis(redis.url).on("error", () => undefined);
  const secrets = makeSecrets();
  const config = defaultTestConfig("", adminKeyHash(secrets.adminKey)) as Record<string, unknown>;
  config.store = { driver: "memory" };
  config.destinations = [
    {
      id: "jobs",
      type: "queue",
      url: "${TEST_REDIS_URL}",
      stream: STREAM,
      transform: { code: "export default (e) => ({ job: 'countersign', agreement: e.data.agreement_id });" },
    },
    {
      id: "ops-mail",
      type: "email",
      host: "127.0.0.1",
      allowPrivateNetworks: true,
      port: smtp.port,
      from: "Gateway <gateway@example.com>",
      to: ["ops@example.com"],
      templates: { "*": { subject: "Deal {{deal}} is {{state}}", text: "Deal {{deal}} ({{state}})" } },
      transform: {
        code: "export default (e) => ({ deal: e.data.external_id, state: e.type.split('.')[1] });",
      },
    },
  ];
  config.routes = [{ types: ["agreement.completed"], destinations: ["jobs", "ops-mail"] }];
  gateway = await startGatewayProcess({ config, secrets, env: { TEST_REDIS_URL: redis.url } });
});

afterAll(async () => {
  await gateway?.kill();
  reader?.disconnect();
  await Promise.all([redis?.stop(), smtp?.close()]);
});

describe("transforms on queue and email destinations", () => {
  it("queues the transform's payload and mails the templates rendered over it", async () => {
    const delivery = await esignDelivery(gateway.secrets.esign, "agreement.completed", { subjectId: "agr-q" });
    const response = await postWebhook(gateway.url, "esign", delivery);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };

    // Transforms run in worker threads that load QuickJS as the gateway starts: on a loaded
    // machine the first entry can take longer than one blocking read.
    let answer: [string, [string, string[]][]][] | null = null;
    for (let i = 0; i < 8 && !answer; i++) {
      answer = (await reader.xread("COUNT", 10, "BLOCK", 15_000, "STREAMS", STREAM, "0-0")) as typeof answer;
    }
    const [, flat] = answer?.[0]?.[1]?.[0] ?? [];
    const entry = readStreamFields(flat ?? []);
    expect(entry).toMatchObject({ id, type: "agreement.completed", source: "/webhooks/esign" });
    expect(JSON.parse(entry.payload as string)).toEqual({ job: "countersign", agreement: "agr-q" });

    const [mail] = await smtp.waitForMessages(1);
    expect(mail?.parsed.subject).toBe("Deal crm-deal-4711 is completed");
    expect(mail?.parsed.text?.trim()).toBe("Deal crm-deal-4711 (completed)");
    expect(mail?.parsed.headers.get("x-gateway-event-id")).toBe(id);
  }, 300_000);
});
