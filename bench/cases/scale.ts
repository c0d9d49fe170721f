/**
 * Scale benchmark (`npm run bench -- scale`): how the default sqlite store behaves with a large
 * log. Fills a data directory through the store API (N events, default 1,000,000, plus 4
 * delivery records per event), then measures a gateway process started on it: restart to
 * healthy, RSS, `GET /events` with each filter and `GET /events/{id}` p50/p99 over HTTP, and
 * ingress req/s at N events beside the gateway on an empty directory and bare node:http, all
 * in the same run. Size: `BENCH_SCALE_EVENTS=100000` or `--scale-events=100000`; load
 * duration: `BENCH_SCALE_SECONDS` (default 10).
 * Targets (issue "Embedded store that stays small and fast as the log grows"): RSS <= 200 MB at
 * 1M events, restart <= 1 s, filtered list p99 <= 20 ms, get p99 <= 5 ms, ingress at N >= 0.95x
 * ingress at 0.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStorage } from "../../adapters/store/sqlite/sqlite-storage.ts";
import type { DeliveryRecord } from "../../src/delivery/outbox-contract.ts";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { runLoad } from "../lib/autocannon-run.ts";
import { createWebhookGenerator } from "../lib/signed-webhooks.ts";
import { spawnAndWait } from "../lib/spawn-process.ts";
import { checkTarget } from "../lib/targets.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const BARE = new URL("../lib/bare-server.ts", import.meta.url).pathname;
const ADMIN_KEY = "bench-admin";
const DESTINATIONS = ["crm", "erp", "queue", "mail"];
const CHUNK = 1000;

/** The fill size of a case (`--<name>-events=N`, else `BENCH_<NAME>_EVENTS`, default 1,000,000). */
export function readFillSize(name: string): number {
  const flag = process.argv.find((a) => a.startsWith(`--${name}-events=`));
  const fromEnv = process.env[`BENCH_${name.toUpperCase()}_EVENTS`];
  const value = Number(flag?.slice(`--${name}-events=`.length) ?? fromEnv ?? 1_000_000);
  if (!Number.isInteger(value) || value < 1000) throw new Error(`${name} events: an integer >= 1000`);
  return value;
}

/** Event number `n` of the fill: both services, 4 types, 1,000 subjects, 10,000 external ids. */
export function fillRecord(n: number, receivedAt: number): EventRecord {
  const esign = n % 2 === 0;
  const type = esign ? (n % 4 === 0 ? "agreement.signed" : "agreement.completed") : "candidate.accepted";
  const data = esign ? buildEsignBody(type, { uniqueId: `f${n}` }) : buildStaffingBody(type, { uniqueId: `f${n}` });
  const externalId = `crm-${n % 10_000}`;
  (data as Record<string, unknown>)[esign ? "external_id" : "externalId"] = externalId;
  const id = `evt_${createHash("sha256").update(`fill-${n}`).digest("hex").slice(0, 32)}`;
  const sourceId = esign ? "esign" : "staffing";
  const time = new Date(receivedAt).toISOString();
  return {
    id,
    seq: 0,
    sourceId,
    identity: `fill-${n}`,
    receivedAt,
    event: {
      specversion: "1.0",
      id,
      source: `/webhooks/${sourceId}`,
      type,
      subject: `${esign ? "agreements" : "staffing-requests"}/s-${n % 1000}`,
      time,
      datacontenttype: "application/json",
      data,
      service: sourceId,
      upstreamid: `fill-${n}`,
      upstreamidkind: esign ? "event_id" : "delivery-id",
      receivedtime: time,
    },
    rawBody: JSON.stringify(data),
    rawBodyEncoding: "utf8",
    headers: { "content-type": "application/json", "x-svc-signature": "[redacted]" },
    marks: [],
  } as EventRecord;
}

/**
 * Fills `dir` with `count` events spread over the last 24 hours (1M events = the issue's "1
 * million a day") and 4 terminal deliveries each; returns the id of an event in the middle.
 */
export async function fill(dir: string, count: number) {
  const { store, outbox } = await openSqliteStorage({ dir });
  const span = 24 * 3600_000;
  const start = Date.now() - span;
  let sampleId = "";
  for (let from = 0; from < count; from += CHUNK) {
    const records = Array.from({ length: Math.min(CHUNK, count - from) }, (_, i) =>
      fillRecord(from + i, start + Math.floor(((from + i) / count) * span)),
    );
    const results = await Promise.all(
      records.map((r) => store.append(r, `${r.sourceId}\u0000${r.identity}`, 72 * 3600_000)),
    );
    const deliveries: DeliveryRecord[] = records.flatMap((r, i) =>
      DESTINATIONS.map((destinationId) => ({
        eventId: r.id,
        destinationId,
        seq: results[i]?.seq as number,
        subject: r.event.subject,
        receivedAt: r.receivedAt,
        createdAt: r.receivedAt,
        updatedAt: r.receivedAt + 50,
        state: "delivered" as const,
        nextAttemptAt: r.receivedAt,
        failures: 0,
        attempts: [{ at: r.receivedAt + 10, ok: true, status: 200, latencyMs: 40 }],
      })),
    );
    await outbox.createDeliveries(deliveries, results[results.length - 1]?.seq as number);
    if (from === Math.floor(count / 2 / CHUNK) * CHUNK) sampleId = records[0]?.id as string;
  }
  await store.close();
  await outbox.close();
  return sampleId;
}

/** Starts a gateway process on the sqlite store in `dataDir`; resolves once it answers /healthz. */
export async function startGateway(dataDir: string, secrets: { esign: string; staffing: string }) {
  const config = {
    server: { host: "127.0.0.1", port: 0 },
    store: { driver: "sqlite", dir: dataDir },
    sources: [
      { id: "esign", service: "esign", secrets: ["${BENCH_ESIGN_SECRET}"] },
      { id: "staffing", service: "staffing", secrets: ["${BENCH_STAFFING_SECRET}"] },
    ],
    admin: { apiKeyHashes: [`sha256:${createHash("sha256").update(ADMIN_KEY).digest("hex")}`] },
    log: { level: "warn" },
  };
  const configPath = join(dataDir, "..", `gateway-${randomBytes(3).toString("hex")}.json`);
  await writeFile(configPath, JSON.stringify(config));
  const started = performance.now();
  const gateway = await spawnAndWait(
    [BIN, "serve", "--config", configPath],
    (line) => (line.includes('"msg":"listening"') ? JSON.parse(line).url : undefined),
    { BENCH_ESIGN_SECRET: secrets.esign, BENCH_STAFFING_SECRET: secrets.staffing },
  );
  for (let i = 0; i < 500; i++) {
    if ((await fetch(`${gateway.url}/healthz`)).status === 200) break;
  }
  return { gateway, restartMs: Math.round(performance.now() - started) };
}

/** p50/p99 in ms of `count` sequential GETs of `path`. */
async function timeGets(url: string, path: string, count = 200) {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((times[Math.min(times.length - 1, Math.floor(q * times.length))] as number) * 100) / 100;
  return { p50: at(0.5), p99: at(0.99) };
}

/** Runs the scale case and returns its figures. */
export async function benchScale(): Promise<Record<string, number | string>> {
  const count = readFillSize("scale");
  const seconds = Number(process.env.BENCH_SCALE_SECONDS ?? 10);
  const load = { connections: 100, durationSeconds: seconds };
  const root = await mkdtemp(join(tmpdir(), "gw-scale-"));
  const secrets = { esign: randomBytes(24).toString("hex"), staffing: randomBytes(24).toString("hex") };
  const generate = createWebhookGenerator(secrets, randomBytes(4).toString("hex"));
  const out: Record<string, number | string> = { events: count, deliveries: count * DESTINATIONS.length };
  const bare = await spawnAndWait(["--import", "tsx", BARE], (line) =>
    line.startsWith("PORT ") ? `http://127.0.0.1:${line.slice(5)}` : undefined,
  );
  try {
    await runLoad(bare.url, generate, { ...load, durationSeconds: 2 });
    out.bare_rps = (await runLoad(bare.url, generate, load)).requestsPerSecond;

    const empty = await startGateway(join(root, "empty"), secrets);
    out.start_empty_to_healthy_ms = empty.restartMs;
    await runLoad(empty.gateway.url, generate, { ...load, durationSeconds: 2 });
    out.ingress_rps_at_0 = (await runLoad(empty.gateway.url, generate, load)).requestsPerSecond;
    await empty.gateway.stop();

    const filled = performance.now();
    const sampleId = await fill(join(root, "full"), count);
    out.fill_s = Math.round((performance.now() - filled) / 100) / 10;
    const { gateway, restartMs } = await startGateway(join(root, "full"), secrets);
    out.restart_to_healthy_ms = restartMs;
    out.rss_after_restart_mb = Math.round((await gateway.rss()) / 1048576);
    // One minute, twelve hours ago.
    const from = new Date(Date.now() - 12 * 3600_000).toISOString();
    const to = new Date(Date.now() - 12 * 3600_000 + 60_000).toISOString();
    const queries: Record<string, string> = {
      list: "/events?limit=50",
      list_source: "/events?limit=50&source=staffing",
      list_type: "/events?limit=50&type=agreement.signed",
      list_type_glob: "/events?limit=50&type=agreement.*",
      list_subject: "/events?limit=50&subject=agreements/s-500",
      list_external_id: "/events?limit=50&external_id=crm-4242",
      list_time_range: `/events?limit=50&from=${from}&to=${to}`,
      get_by_id: `/events/${sampleId}`,
    };
    for (const [name, path] of Object.entries(queries)) {
      const { p50, p99 } = await timeGets(gateway.url, path);
      out[`${name}_p50_ms`] = p50;
      out[`${name}_p99_ms`] = p99;
    }
    await runLoad(gateway.url, generate, { ...load, durationSeconds: 2 });
    out.ingress_rps_at_n = (await runLoad(gateway.url, generate, load)).requestsPerSecond;
    out.rss_after_load_mb = Math.round((await gateway.rss()) / 1048576);
    await gateway.stop();
  } finally {
    await bare.stop();
    await rm(root, { recursive: true, force: true });
  }
  const ratio = (a: number | string | undefined, b: number | string | undefined) =>
    Math.round((Number(a) / Number(b)) * 100) / 100;
  out.ratio_n_to_0 = ratio(out.ingress_rps_at_n, out.ingress_rps_at_0);
  out.ratio_0_to_bare = ratio(out.ingress_rps_at_0, out.bare_rps);
  out.ratio_n_to_bare = ratio(out.ingress_rps_at_n, out.bare_rps);
  console.log(`\nscale: ${count} events + ${count * DESTINATIONS.length} delivery records (sqlite store)`);
  for (const [key, value] of Object.entries(out)) console.log(`${key.padEnd(28)} ${value}`);
  const at = `at ${count} events`;
  checkTarget("scale", `ingress ${at} / ingress at 0`, Number(out.ratio_n_to_0), ">=", 0.95);
  checkTarget("scale", `GET /events/{id} p99 ${at}`, Number(out.get_by_id_p99_ms), "<=", 5, " ms");
  const lists = Object.keys(out).filter((key) => key.startsWith("list") && key.endsWith("_p99_ms"));
  checkTarget(
    "scale",
    `GET /events (worst filter) p99 ${at}`,
    Math.max(...lists.map((key) => Number(out[key]))),
    "<=",
    20,
    " ms",
  );
  checkTarget("scale", `RSS after the load ${at}`, Number(out.rss_after_load_mb), "<=", 200, " MB");
  checkTarget("scale", `restart to healthy ${at}`, Number(out.restart_to_healthy_ms), "<=", 1000, " ms");
  return out;
}
