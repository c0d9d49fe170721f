/**
 * `GET /events?filter=` on the Redis store (a real redis-server), where the filter is evaluated
 * in memory over the store's pages: the same answers as on SQLite, with cursors, on events of
 * both services.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultTestConfig, type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import { adminGet, adminKeyHash, esignDelivery, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import { tempDir } from "../listen/listen-fixtures.ts";

/** A sample webhook body being edited before signing (fields of both services). */
type SampleBody = Record<string, unknown> & { result?: object; participants?: { email?: string }[] };

let redis: RedisServer;
let gateway: GatewayProcess;
const ids: Record<string, string> = {};

beforeAll(async () => {
  redis = await startRedisServer();
  const dataDir = await tempDir("gw-filter-redis-");
  const adminKey = `admin_${Date.now()}`;
  gateway = await startGatewayProcess({
    dataDir,
    secrets: { esign: "esign-secret-0123456789", staffing: "staffing-secret-0123456789", adminKey },
    config: {
      ...defaultTestConfig(dataDir, adminKeyHash(adminKey)),
      store: { driver: "redis", url: redis.url, prefix: "filters" },
    },
  });
  const post = async (source: string, delivery: Awaited<ReturnType<typeof esignDelivery>>) => {
    const response = await postWebhook(gateway.url, source, delivery);
    if (response.status !== 202) throw new Error(`webhook answered ${response.status}`);
    return ((await response.json()) as { id: string }).id;
  };
  const confidence = (value: number) => (body: SampleBody) => {
    body.result = { ...body.result, confidence: value };
  };
  ids.low = await post(
    "staffing",
    await staffingDelivery(gateway.secrets.staffing, "candidate.accepted", { edit: confidence(0.4) }),
  );
  ids.high = await post(
    "staffing",
    await staffingDelivery(gateway.secrets.staffing, "candidate.accepted", { edit: confidence(0.97) }),
  );
  ids.completed = await post("esign", await esignDelivery(gateway.secrets.esign, "agreement.completed"));
  ids.declined = await post("esign", await esignDelivery(gateway.secrets.esign, "agreement.declined"));
  ids.higher = await post(
    "staffing",
    await staffingDelivery(gateway.secrets.staffing, "candidate.declined", { edit: confidence(0.99) }),
  );
});

afterAll(async () => {
  await gateway?.kill();
  await redis?.stop();
});

async function search(filter: unknown, extra = "") {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `/events?filter=${encodeURIComponent(JSON.stringify(filter))}&limit=1${extra}${cursor ? `&cursor=${cursor}` : ""}`;
    const page = await adminGet(gateway.url, query, gateway.secrets.adminKey);
    if (page.status !== 200) throw new Error(`GET /events answered ${page.status}: ${JSON.stringify(page.body)}`);
    seen.push(...page.body.events.map((e: { id: string }) => e.id));
    cursor = page.body.next_cursor;
  } while (cursor !== null);
  return seen;
}

it("numbers, arrays of objects, $not and dialect-free filters select the same events as on SQLite", async () => {
  expect(await search({ data: { result: { confidence: { $gt: 0.9 } } } })).toEqual([ids.higher, ids.high]);
  expect(await search({ data: { result: { confidence: { $gt: 0.9 } } } }, "&type=candidate.accepted")).toEqual([
    ids.high,
  ]);
  // One element must match the whole object filter (anna signed; erik is not anna).
  expect(await search({ data: { participants: { status: "signed", email: { $contains: "anna" } } } })).toEqual([
    ids.completed,
  ]);
  expect(await search({ data: { participants: { name: "Erik Lind", email: { $contains: "anna" } } } })).toEqual([]);
  expect(await search({ data: { participants: { $exist: true } } })).toEqual([ids.completed]);
  expect(await search({ type: { $startsWith: "agreement." }, $not: { type: "agreement.declined" } })).toEqual([
    ids.completed,
  ]);
  expect(await search({ data: { result: { confidence: { $gt: "0.9" } } } })).toEqual([]);
});
