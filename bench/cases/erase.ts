/**
 * Erasure benchmark (`npm run bench -- erase`, minutes: it fills a large log): a SQLite data
 * directory holds N events (default 1,000,000, `--erase-events=N`), 1 % of them about one
 * subject (10,000 at 1M). A gateway process started on it erases that subject through
 * `POST /events/erase` while signed webhooks keep arriving (10 connections), and the same load
 * runs once before without the erasure. Targets (issue "Data lifecycle"): the erasure takes
 * <= 5 s, and ingress never stalls more than 100 ms (the longest webhook answer during the
 * erasure, beside the longest without it).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { openSqliteStorage } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { createWebhookGenerator } from "../lib/signed-webhooks.ts";
import { fillRecord, readFillSize, startGateway } from "./scale.ts";

/** The scale case's gateway admin key (its startGateway). */
const ADMIN_KEY = "bench-admin";
const SUBJECT = "agreements/erase-me";
const CHUNK = 1000;

/** Fills `dir` with `count` events over the last day, every hundredth about SUBJECT. */
async function fillLog(dir: string, count: number): Promise<number> {
  const { store, outbox } = await openSqliteStorage({ dir });
  const start = Date.now() - 24 * 3600_000;
  let mine = 0;
  for (let from = 0; from < count; from += CHUNK) {
    const records = Array.from({ length: Math.min(CHUNK, count - from) }, (_, i) => {
      const n = from + i;
      const record = fillRecord(n, start + Math.floor((n / count) * 24 * 3600_000));
      if (n % 100 === 0) {
        record.event.subject = SUBJECT;
        mine++;
      }
      return record;
    });
    await Promise.all(records.map((r) => store.append(r, `${r.sourceId}\u0000${r.identity}`, 72 * 3600_000)));
  }
  await store.close();
  await outbox.close();
  return mine;
}

/** The longest answer (ms) and the count of webhooks answered during `seconds` of load. */
async function load(url: string, generate: ReturnType<typeof createWebhookGenerator>, seconds: number) {
  const result = await autocannon({
    url,
    connections: 10,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const item = generate();
          return { ...request, method: "POST", path: item.path, headers: item.headers, body: item.body };
        },
      },
    ],
  });
  return { maxMs: result.latency.max, p99Ms: result.latency.p99, total: result.requests.total, non2xx: result.non2xx };
}

/** Runs the erase case and returns its figures. */
export async function benchErase(): Promise<Record<string, number | string>> {
  const count = readFillSize("erase");
  const root = await mkdtemp(join(tmpdir(), "gw-erase-"));
  const secrets = { esign: randomBytes(24).toString("hex"), staffing: randomBytes(24).toString("hex") };
  const generate = createWebhookGenerator(secrets, randomBytes(4).toString("hex"));
  const out: Record<string, number | string> = { events: count };
  try {
    const filled = performance.now();
    out.subject_events = await fillLog(join(root, "data"), count);
    out.fill_s = Math.round((performance.now() - filled) / 100) / 10;
    const { gateway } = await startGateway(join(root, "data"), secrets);
    try {
      const quiet = await load(gateway.url, generate, 5);
      out.ingress_max_ms_without_erase = quiet.maxMs;
      out.ingress_p99_ms_without_erase = quiet.p99Ms;
      const during = load(gateway.url, generate, 8);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const started = performance.now();
      const response = await fetch(`${gateway.url}/events/erase`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ subject: SUBJECT }),
      });
      const answer = (await response.json()) as { events?: number };
      out.erase_ms = Math.round(performance.now() - started);
      out.erased = answer.events ?? `HTTP ${response.status}`;
      const loaded = await during;
      out.ingress_max_ms_during_erase = loaded.maxMs;
      out.ingress_p99_ms_during_erase = loaded.p99Ms;
      out.ingress_non2xx_during_erase = loaded.non2xx;
    } finally {
      await gateway.stop();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const met = (ok: boolean) => (ok ? "met" : "missed");
  out.target_erase_5s = met(Number(out.erase_ms) <= 5000);
  out.target_no_stall_100ms = met(Number(out.ingress_max_ms_during_erase) <= 100);
  console.table(out);
  return out;
}
