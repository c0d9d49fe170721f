/**
 * Main-thread CPU per webhook of the ingress policy alone, without HTTP: the gateway built as
 * `gateway serve` builds it (sqlite store in a temp dir, node:crypto, both built-in services, the
 * logger at info writing to nowhere) and `Gateway.receiveWebhook` (what the Node fast path calls)
 * driven in this process with the signed bodies of the ingress bench, `BENCH_IN_FLIGHT` (default
 * 100) at a time. No load generator shares the cores and nothing crosses a socket, so the figure
 * moves far less on a loaded machine than the HTTP benches; the HTTP share of the bench's
 * main-thread figure is the difference (BENCHMARKS.md). Prints main-thread and process µs per
 * accepted webhook for `BENCH_WEBHOOKS` (default 20,000) after a warm-up of a quarter of that.
 * `node --import tsx bench/lib/ingress-policy-cpu.ts` (copy it into another checkout for an A/B).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inProcessHub } from "../../adapters/hub/in-process.ts";
import { createNodeCrypto } from "../../adapters/node/node-crypto.ts";
import { sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { createGateway } from "../../src/create-gateway.ts";
import type { WebhookInput } from "../../src/ingress/webhook-exchange.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { cpuSecondsOf, mainThreadCpuSecondsOf } from "./cpu-meter.ts";
import { createWebhookGenerator } from "./signed-webhooks.ts";

const total = Number(process.env.BENCH_WEBHOOKS) || 20_000;
const inFlight = Number(process.env.BENCH_IN_FLIGHT) || 100;
const secrets = { esign: "e".repeat(48), staffing: "s".repeat(48) };
const dir = await mkdtemp(join(tmpdir(), "gw-policy-cpu-"));
const config = resolveConfig(
  {
    server: { host: "127.0.0.1", port: 0 },
    store: { driver: "disk", dir: join(dir, "data") },
    sources: [
      { id: "esign", service: "esign", secrets: [secrets.esign] },
      { id: "staffing", service: "staffing", secrets: [secrets.staffing] },
    ],
  },
  {},
);
const store = await sqliteStore({ dir: join(dir, "data"), services: builtinServices });
const gateway = createGateway({
  config,
  services: builtinServices,
  store,
  hub: inProcessHub(undefined),
  crypto: createNodeCrypto(),
  logger: createLogger("info", () => {}),
});
if (!gateway.receiveWebhook) throw new Error("the gateway has no receiveWebhook (tracing on?)");
const receive = gateway.receiveWebhook;

/** A request as the fast path hands it over: lower-cased headers, the body bytes already read. */
function inputOf(headers: Record<string, string>, body: Uint8Array): WebhookInput {
  const list: Record<string, string> = { host: "127.0.0.1", "content-length": String(body.length) };
  for (const name in headers) list[name.toLowerCase()] = headers[name] as string;
  return {
    headers: { get: (name) => list[name.toLowerCase()] ?? null },
    clientAddress: "127.0.0.1",
    readBody: () => Promise.resolve({ ok: true, bytes: body }),
    listHeaders: () => ({ ...list }),
  };
}

const generate = createWebhookGenerator(secrets, `policy-${process.pid}`);
const encoder = new TextEncoder();
let accepted = 0;
let refused = 0;
async function run(count: number): Promise<void> {
  let started = 0;
  const lane = async () => {
    while (started < count) {
      started++;
      const request = generate();
      const sourceId = request.path.slice("/webhooks/".length);
      const answer = await receive(sourceId, inputOf(request.headers, encoder.encode(request.body)), request.path);
      if (answer.status === 202) accepted++;
      else refused++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

await run(Math.ceil(total / 4));
accepted = 0;
refused = 0;
const mainBefore = await mainThreadCpuSecondsOf(process.pid);
const allBefore = await cpuSecondsOf(process.pid);
const wallBefore = performance.now();
await run(total);
const wallMs = performance.now() - wallBefore;
const mainUs = (((await mainThreadCpuSecondsOf(process.pid)) - mainBefore) * 1e6) / Math.max(1, accepted);
const allUs = (((await cpuSecondsOf(process.pid)) - allBefore) * 1e6) / Math.max(1, accepted);
console.log(
  `policy only: main ${mainUs.toFixed(1)} µs/webhook   process ${allUs.toFixed(1)} µs   ${Math.round((accepted * 1000) / wallMs)} webhooks/s   accepted ${accepted} refused ${refused}`,
);
await gateway.close();
await store.close().catch(() => {});
await rm(dir, { recursive: true, force: true });
