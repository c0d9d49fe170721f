/**
 * The `postgres` store's layout versions: layout 2 keeps event rows up to 8 kB inline and
 * uncompressed (`toast_tuple_target`, adapters/store/postgres/pg-schema.ts). A database written
 * at layout 1 is migrated forward when a store opens it, its events stay readable, and new
 * events of a webhook's usual size no longer go to the TOAST table; a larger one still does.
 * A layout newer than this gateway's is refused and left as it was. `gateway migrate` (as typed,
 * with a config file) lists and runs the step.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PG_SCHEMA_VERSION, pgMigrationSteps } from "../../adapters/store/postgres/pg-schema.ts";
import { postgresStore } from "../../adapters/store/postgres/postgres-store.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import { usePostgresServer } from "../helpers/postgres-server.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

const db = usePostgresServer();

const DAY = 24 * 3600_000;
const open = (schema: string) => postgresStore({ url: db.server.url, schema, poolSize: 4 });

/** The events table's storage options and how many chunks its TOAST table holds. */
async function eventsStorage(schema: string) {
  const { rows } = await db.admin.query<{ options: string[] | null; toast: string }>(
    `SELECT c.reloptions AS options, t.oid::regclass::text AS toast
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
      WHERE n.nspname = $1 AND c.relname = 'events'`,
    [schema],
  );
  const row = rows[0];
  if (!row) throw new Error(`no events table in ${schema}`);
  const chunks = await db.admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${row.toast}`);
  return { options: row.options ?? [], toastChunks: Number(chunks.rows[0]?.n) };
}

async function version(schema: string): Promise<number> {
  const { rows } = await db.admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_version`);
  return Number(rows[0]?.version);
}

async function appendAll(store: StoreDriver, records: ReturnType<typeof makeRecord>[]) {
  return Promise.all(records.map((r) => store.append(r, keyOf(r), DAY)));
}

describe("postgres store: layout versions", () => {
  it("creates a new schema at the current layout, event rows of a webhook's size stored inline", async () => {
    expect(PG_SCHEMA_VERSION).toBe(2);
    const store = await open("lv_fresh");
    try {
      expect(await version("lv_fresh")).toBe(2);
      expect((await eventsStorage("lv_fresh")).options).toContain("toast_tuple_target=8160");
      const records = [1, 2, 3].map((n) => makeRecord(n, n === 2 ? { sourceId: "staffing" } : {}));
      await appendAll(store, records);
      // Each of these rows is above PostgreSQL's default threshold (2032 bytes for 8 kB pages,
      // record and document together): at layout 1 such rows leave chunks in the TOAST table
      // (the next test).
      const { rows } = await db.admin.query<{ size: number }>(
        "SELECT octet_length(record) + octet_length(doc::text) AS size FROM lv_fresh.events",
      );
      for (const row of rows) expect(Number(row.size)).toBeGreaterThan(2_032);
      expect((await eventsStorage("lv_fresh")).toastChunks).toBe(0);
      expect((await store.readAfter(0, 10)).map((e) => e.id)).toEqual(records.map((r) => r.id));
      // A record larger than a page (and not compressible below it) is still moved out, and
      // reads back exactly.
      const big = makeRecord(4, { data: { blob: randomBytes(12_000).toString("base64"), n: 4 } });
      await appendAll(store, [big]);
      expect((await eventsStorage("lv_fresh")).toastChunks).toBeGreaterThan(0);
      expect(await store.get(big.id)).toEqual({ ...big, seq: 4 });
    } finally {
      await store.close();
    }
  });

  it("migrates a layout-1 database when a store opens it: old events stay readable, new rows inline", {
    timeout: 120_000,
  }, async () => {
    const schema = "lv_old";
    const first = await open(schema);
    const old = [1, 2].map((n) => makeRecord(n));
    await appendAll(first, old);
    await first.close();
    // Back to layout 1 as the release before wrote it: the default TOAST threshold, version 1,
    // and rows written under it.
    await db.admin.query(`ALTER TABLE ${schema}.events RESET (toast_tuple_target)`);
    await db.admin.query(`UPDATE ${schema}.schema_version SET version = 1`);
    await db.admin.query(`DELETE FROM ${schema}.events`);
    await db.admin.query(`DELETE FROM ${schema}.marks`);
    await db.admin.query(`UPDATE ${schema}.meta SET value = 0 WHERE key = 'last_seq'`);
    const atOne = await postgresStoreAtLayoutOne(schema, old);
    expect(atOne.toastChunks).toBeGreaterThan(0);
    expect(pgMigrationSteps(1)).toEqual([
      "to layout version 2: event rows up to 8 kB are stored inline and uncompressed (rows written before stay as they are)",
    ]);
    expect(pgMigrationSteps(2)).toEqual([]);

    // An instance of the previous build appending and delivering meanwhile: its transaction's
    // locks do not hold the migration up (it would wait here until the test's timeout).
    const running = new pg.Client({ connectionString: db.server.url });
    await running.connect();
    await running.query("BEGIN");
    await running.query(`LOCK TABLE ${schema}.events, ${schema}.marks, ${schema}.deliveries IN ROW EXCLUSIVE MODE`);
    let store: StoreDriver;
    try {
      store = await open(schema);
    } finally {
      await running.query("ROLLBACK").catch(() => {});
      await running.end().catch(() => {});
    }
    try {
      expect(await version(schema)).toBe(2);
      const after = await eventsStorage(schema);
      expect(after.options).toContain("toast_tuple_target=8160");
      expect(after.toastChunks).toBe(atOne.toastChunks);
      expect(await store.readAfter(0, 10)).toEqual(old.map((r, i) => ({ ...r, seq: i + 1 })));
      const fresh = [3, 4].map((n) => makeRecord(n));
      const results = await appendAll(store, fresh);
      expect(results.map((r) => r.seq)).toEqual([3, 4]);
      // The new rows added no chunk; a duplicate of an old delivery is still one.
      expect((await eventsStorage(schema)).toastChunks).toBe(atOne.toastChunks);
      expect(await store.claim(keyOf(old[0] as ReturnType<typeof makeRecord>), 60_000)).toEqual({
        status: "duplicate",
        id: old[0]?.id,
      });
    } finally {
      await store.close();
    }
    // Opening again changes nothing.
    const again = await open(schema);
    await again.close();
    expect(await version(schema)).toBe(2);
  });

  it("refuses a layout newer than its own and leaves it as it was", async () => {
    const schema = "lv_newer";
    const store = await open(schema);
    await store.close();
    await db.admin.query(`UPDATE ${schema}.schema_version SET version = 3`);
    await expect(open(schema)).rejects.toThrow(
      `postgres store: schema ${schema} is at version 3, newer than this gateway's 2`,
    );
    expect(await version(schema)).toBe(3);
  });
});

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const run = promisify(execFile);

/** Runs `gateway <args>`; exit code, stdout and stderr. */
async function gateway(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("gateway migrate on a postgres store", () => {
  it("lists the step with --dry-run and changes nothing, runs it without, and refuses a newer layout", async () => {
    const schema = "lv_cli";
    const store = await open(schema);
    await store.close();
    await db.admin.query(`ALTER TABLE ${schema}.events RESET (toast_tuple_target)`);
    await db.admin.query(`UPDATE ${schema}.schema_version SET version = 1`);
    const config = join(await mkdtemp(join(tmpdir(), "gw-pg-migrate-")), "gateway.json");
    await writeFile(config, JSON.stringify({ store: { driver: "postgres", url: db.server.url, schema } }));

    const dry = await gateway(["migrate", "--config", config, "--dry-run"]);
    expect(dry).toMatchObject({ code: 0, stderr: "" });
    expect(dry.stdout).toBe(
      "the postgres store is at layout version 1; pending 1 step(s) to layout version 2:\n" +
        "  to layout version 2: event rows up to 8 kB are stored inline and uncompressed (rows written before stay as they are)\n",
    );
    expect(await version(schema)).toBe(1);
    expect((await eventsStorage(schema)).options).toEqual([]);

    const applied = await gateway(["migrate", "--config", config]);
    expect(applied).toMatchObject({ code: 0, stderr: "" });
    expect(applied.stdout).toContain(
      "the postgres store is at layout version 1; applied 1 step(s) to layout version 2:",
    );
    expect(await version(schema)).toBe(2);
    expect((await eventsStorage(schema)).options).toContain("toast_tuple_target=8160");

    const again = await gateway(["migrate", "--config", config, "--dry-run"]);
    expect(again).toMatchObject({ code: 0, stdout: "the postgres store is at layout version 2: nothing to migrate\n" });

    await db.admin.query(`UPDATE ${schema}.schema_version SET version = 7`);
    const newer = await gateway(["migrate", "--config", config]);
    expect(newer.code).toBe(1);
    const lines = newer.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`schema ${schema} is at version 7, newer than this gateway's 2`);
    expect(await version(schema)).toBe(7);

    const empty = join(await mkdtemp(join(tmpdir(), "gw-pg-migrate-")), "gateway.json");
    await writeFile(empty, JSON.stringify({ store: { driver: "postgres", url: db.server.url, schema: "lv_none" } }));
    const none = await gateway(["migrate", "--config", empty]);
    expect(none).toMatchObject({
      code: 0,
      stdout: "the postgres store has no tables yet: nothing to migrate (serve creates them at layout version 2)\n",
    });
    const { rows } = await db.admin.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = 'lv_none'");
    expect(rows).toHaveLength(0);
  }, 180_000);
});

/**
 * Writes `records` into a schema put back at layout 1 by SQL alone (the store would migrate it
 * on open): the same row shape, under PostgreSQL's default TOAST threshold. Answers the chunks
 * they left in the TOAST table.
 */
async function postgresStoreAtLayoutOne(schema: string, records: ReturnType<typeof makeRecord>[]) {
  const { eventColumns } = await import("../../adapters/store/postgres/pg-event-queries.ts");
  const { createEventSummarizer } = await import("../../src/store/match-event-query.ts");
  const { pgBytes } = await import("../../adapters/store/postgres/pg-connection.ts");
  const summarize = createEventSummarizer(undefined);
  for (const [i, record] of records.entries()) {
    const c = eventColumns(record, summarize);
    await db.admin.query(
      `INSERT INTO ${schema}.events (seq, id, source_id, type, subject, external_id, received_at, record, doc)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)`,
      [i + 1, c.id, c.sourceId, c.type, c.subject, c.externalId, c.receivedAt, c.record, c.doc],
    );
    await db.admin.query(`INSERT INTO ${schema}.marks (key, event_id, expires_at) VALUES ($1, $2, $3)`, [
      pgBytes(keyOf(record)),
      record.id,
      Date.now() + DAY,
    ]);
  }
  await db.admin.query(`UPDATE ${schema}.meta SET value = $1 WHERE key = 'last_seq'`, [records.length]);
  return eventsStorage(schema);
}
