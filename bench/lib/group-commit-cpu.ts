/**
 * Main-thread CPU of the SQLite store's handoff to its writer thread (group-commit.ts), A/B
 * between checkouts in one process, alternating: each round sends `BENCH_WRITES` (default 20,000)
 * event appends as the store sends them (the event insert with a ~2 KB record and the mark
 * upsert), in groups of `BENCH_GROUP` (default 20: what one turn of the event loop gathers at a
 * few thousand webhooks a second), waits for each group to be durable, and reads this thread's
 * CPU time from /proc (the writer's SQLite and fdatasync cost its own thread, not counted).
 * `node --import tsx bench/lib/group-commit-cpu.ts <name>=<checkout dir> ...`; `BENCH_ROUNDS` (4).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { EVENT_SQL } from "../../src/store/sql/event-sql.ts";
import { median } from "./checkout-ab.ts";
import { mainThreadCpuSecondsOf } from "./cpu-meter.ts";

type Run = (statements: [string, unknown[]][]) => Promise<number[]>;
interface Writer {
  run: Run;
  close(): Promise<void>;
}

const writes = Number(process.env.BENCH_WRITES) || 20_000;
const groupSize = Number(process.env.BENCH_GROUP) || 20;
const rounds = Number(process.env.BENCH_ROUNDS) || 4;
const checkouts = process.argv.slice(2).map((arg) => {
  const [name, dir] = arg.split("=", 2) as [string, string];
  return { name, dir };
});
if (checkouts.length === 0) throw new Error("usage: group-commit-cpu.ts <name>=<checkout dir> ...");

const body = JSON.stringify(buildEsignBody("agreement.signed", { uniqueId: "x" }));
const record = JSON.stringify({
  id: "evt_0123456789abcdef0123456789abcdef",
  sourceId: "esign",
  receivedAt: 1_764_200_000_000,
  event: JSON.parse(body),
  headers: { "content-type": "application/json", "x-svc-signature": "[redacted]" },
  rawBody: body,
});

async function measure(dir: string): Promise<number> {
  const { createGroupCommit } = (await import(join(dir, "adapters/store/sqlite/group-commit.ts"))) as {
    createGroupCommit(options: object): Promise<Writer>;
  };
  const dataDir = await mkdtemp(join(tmpdir(), "gw-bench-gc-"));
  const path = join(dataDir, "t.db");
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE events (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, source_id TEXT, type TEXT, subject TEXT,
    external_id TEXT, received_at INTEGER, record TEXT);
    CREATE TABLE marks (key TEXT PRIMARY KEY, event_id TEXT, expires_at INTEGER)`);
  db.close();
  const writer = await createGroupCommit({ path, durability: "wal-fdatasync", cacheKiB: 8192, walSizeLimit: 64 << 20 });
  const insert =
    "INSERT INTO events (seq, id, source_id, type, subject, external_id, received_at, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
  let seq = 0;
  const group = () =>
    Promise.all(
      Array.from({ length: groupSize }, () => {
        seq++;
        const id = `evt_${seq.toString(16).padStart(32, "0")}`;
        return writer.run([
          [insert, [seq, id, "esign", "agreement.signed", "agreements/agr_1", "agr_1", 1_764_200_000_000, record]],
          [EVENT_SQL.upsertMark, [`esign:${seq}`, id, 1_764_300_000_000]],
        ]);
      }),
    );
  for (let i = 0; i < 20; i++) await group();
  const before = await mainThreadCpuSecondsOf(process.pid);
  for (let i = 0; i < writes / groupSize; i++) await group();
  const used = (await mainThreadCpuSecondsOf(process.pid)) - before;
  await writer.close();
  await rm(dataDir, { recursive: true, force: true });
  return (used * 1e6) / writes;
}

const results = new Map<string, number[]>();
for (let round = 1; round <= rounds; round++) {
  for (const { name, dir } of checkouts) {
    const us = await measure(dir);
    results.set(name, [...(results.get(name) ?? []), us]);
    console.log(`round ${round} ${name.padEnd(10)} ${us.toFixed(2)} µs main-thread CPU per append`);
  }
}
for (const [name, runs] of results) console.log(`${name.padEnd(10)} median ${median(runs).toFixed(2)} µs per append`);
