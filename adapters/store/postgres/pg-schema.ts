/**
 * The PostgreSQL schema of the `postgres` store and outbox: the tables of the SQLite schema
 * (src/store/sql/schema.ts) in PostgreSQL's dialect, plus what several instances sharing one
 * database need: claims kept with the dedupe marks, delivery leases and per-subject owners.
 *
 * - `schema_version` holds one row: the version of this layout. A database written by a newer
 *   gateway is refused; the migrations work plugs in there (each step bumps the row in the
 *   transaction that changes the layout).
 * - `events.record` keeps the record as JSON text (read back exactly as written, as SQLite
 *   does); `events.doc` is the filter document (`{ event, headers }`) as JSONB, what filter
 *   pushdown reads. It is NULL when the JSON holds a U+0000 escape, which JSONB cannot store:
 *   such rows always reach the in-memory check.
 * - `meta.last_seq` is the event log's counter, and its row lock orders appends: seq order is
 *   commit order, so a reader that saw seq n has seen every seq below n (the outbox's routing
 *   cursor and the live hub's cursor rely on it).
 * - An event row is kept whole in its table page, uncompressed, up to 8 kB (`toast_tuple_target`,
 *   layout version 2): with PostgreSQL's default (2 kB) a typical webhook's row (its record and
 *   its document, about 3.5 kB) was compressed with pglz and its record moved to the TOAST
 *   table, a second row and index entry per event; that was about a quarter of the server's
 *   CPU for an insert, against about 6 % more table space and 5 % more WAL for those rows
 *   (rows of 4-8 kB that compress well take up to about twice the space). Larger rows are
 *   compressed and moved out as before.
 * - Keys (dedupe, kv) and kv values are `bytea`: any string, U+0000 included.
 * - Delivery counts are kept by a trigger in the transaction of the change, as change rows
 *   that are folded into totals later, so that instances never queue on one hot counter row.
 *
 * Created idempotently under a transaction-level advisory lock, so instances starting together
 * do not race.
 */
import pg from "pg";
import { clientConfig, createPool, type PostgresOptions, resolveSchema } from "./pg-connection.ts";

/** The layout version this code reads and writes (the `schema_version` row). */
export const PG_SCHEMA_VERSION = 2;

/** Keeps event rows up to a page's size inline and uncompressed (see the header). */
const EVENTS_INLINE = (schema: string) => `ALTER TABLE ${schema}.events SET (toast_tuple_target = 8160)`;

/**
 * The steps from each layout version to the next, run in the transaction that records the new
 * version (a new schema is created at the current layout directly). Every step is idempotent and
 * takes no lock that appends or deliveries wait for (`SET (toast_tuple_target)` takes SHARE
 * UPDATE EXCLUSIVE), so instances of the previous build keep working through it.
 */
const MIGRATIONS: { version: number; what: string; statements: (schema: string) => string[] }[] = [
  {
    version: 2,
    what: "event rows up to 8 kB are stored inline and uncompressed (rows written before stay as they are)",
    statements: (schema) => [EVENTS_INLINE(schema)],
  },
];

/** What `ensureSchema` would do to a database at layout `version` (undefined: none yet). */
export function pgMigrationSteps(version: number | undefined): string[] {
  if (version === undefined) return [`create the tables at layout version ${PG_SCHEMA_VERSION}`];
  return MIGRATIONS.filter((m) => m.version > version).map((m) => `to layout version ${m.version}: ${m.what}`);
}

/** The layout version recorded in `schema` (undefined when it has no tables yet). */
export async function pgSchemaVersion(client: pg.ClientBase, schema: string): Promise<number | undefined> {
  const exists = await client.query(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'schema_version'",
    [schema],
  );
  if (!exists.rowCount) return undefined;
  const found = await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_version`);
  return found.rows[0]?.version;
}

const TERMINAL = "('delivered', 'dead', 'skipped')";

function statements(schema: string): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${schema}.schema_version (
      one boolean PRIMARY KEY DEFAULT true CHECK (one),
      version integer NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE IF NOT EXISTS ${schema}.events (
      seq bigint PRIMARY KEY,
      id text NOT NULL UNIQUE,
      source_id text NOT NULL,
      type text COLLATE "C" NOT NULL,
      subject text,
      external_id text,
      received_at bigint NOT NULL,
      record text NOT NULL,
      doc jsonb
    )`,
    EVENTS_INLINE(schema),
    `CREATE INDEX IF NOT EXISTS events_by_source ON ${schema}.events (source_id, seq)`,
    `CREATE INDEX IF NOT EXISTS events_by_type ON ${schema}.events (type, seq)`,
    `CREATE INDEX IF NOT EXISTS events_by_subject ON ${schema}.events (subject, seq) WHERE subject IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS events_by_external_id ON ${schema}.events (external_id, seq) WHERE external_id IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS events_by_received_at ON ${schema}.events (received_at)`,
    // A claim (event_id NULL) or a recorded identity's dedupe mark.
    `CREATE TABLE IF NOT EXISTS ${schema}.marks (
      key bytea PRIMARY KEY,
      event_id text,
      expires_at bigint NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS marks_by_expiry ON ${schema}.marks (expires_at)`,
    `CREATE TABLE IF NOT EXISTS ${schema}.kv (
      key bytea PRIMARY KEY,
      value bytea NOT NULL,
      expires_at bigint NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS kv_by_expiry ON ${schema}.kv (expires_at)`,
    `CREATE TABLE IF NOT EXISTS ${schema}.meta (
      key text PRIMARY KEY,
      value bigint NOT NULL
    )`,
    `INSERT INTO ${schema}.meta (key, value) VALUES ('last_seq', 0), ('routing_cursor', 0) ON CONFLICT (key) DO NOTHING`,
    `CREATE TABLE IF NOT EXISTS ${schema}.deliveries (
      event_id text NOT NULL,
      destination_id text NOT NULL,
      seq bigint NOT NULL,
      state text NOT NULL,
      received_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      record text NOT NULL,
      subject text,
      next_at bigint NOT NULL,
      lease_until bigint NOT NULL DEFAULT 0,
      lease_owner text,
      PRIMARY KEY (event_id, destination_id)
    )`,
    `CREATE INDEX IF NOT EXISTS deliveries_by_destination ON ${schema}.deliveries (destination_id, seq)`,
    `CREATE INDEX IF NOT EXISTS deliveries_open ON ${schema}.deliveries (seq) WHERE state NOT IN ${TERMINAL}`,
    `CREATE INDEX IF NOT EXISTS deliveries_due ON ${schema}.deliveries (greatest(next_at, lease_until)) WHERE state NOT IN ${TERMINAL}`,
    `CREATE INDEX IF NOT EXISTS deliveries_final ON ${schema}.deliveries (updated_at) WHERE state IN ${TERMINAL}`,
    `CREATE INDEX IF NOT EXISTS deliveries_by_subject ON ${schema}.deliveries (destination_id, subject, seq)
      WHERE subject IS NOT NULL AND state NOT IN ${TERMINAL}`,
    `CREATE TABLE IF NOT EXISTS ${schema}.destination_states (
      id text PRIMARY KEY,
      record text NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS ${schema}.subject_owners (
      destination_id text NOT NULL,
      subject text NOT NULL,
      owner text NOT NULL,
      until bigint NOT NULL,
      PRIMARY KEY (destination_id, subject)
    )`,
    // Totals per (destination, state), plus the changes not yet added to them: the trigger only
    // inserts a change row (no row lock that concurrent transactions would queue or deadlock
    // on), and the outbox folds the changes into the totals now and then (postgres-outbox.ts).
    `CREATE TABLE IF NOT EXISTS ${schema}.delivery_counts (
      destination_id text NOT NULL,
      state text NOT NULL,
      n bigint NOT NULL,
      PRIMARY KEY (destination_id, state)
    )`,
    `CREATE TABLE IF NOT EXISTS ${schema}.delivery_count_changes (
      destination_id text NOT NULL,
      state text NOT NULL,
      n integer NOT NULL
    )`,
    `CREATE OR REPLACE FUNCTION ${schema}.count_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.state <> NEW.state) THEN
        INSERT INTO ${schema}.delivery_count_changes VALUES (OLD.destination_id, OLD.state, -1);
      END IF;
      IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.state <> NEW.state) THEN
        INSERT INTO ${schema}.delivery_count_changes VALUES (NEW.destination_id, NEW.state, 1);
      END IF;
      RETURN NULL;
    END $$`,
    `DROP TRIGGER IF EXISTS deliveries_count ON ${schema}.deliveries`,
    `CREATE TRIGGER deliveries_count AFTER INSERT OR UPDATE OF state OR DELETE ON ${schema}.deliveries
      FOR EACH ROW EXECUTE FUNCTION ${schema}.count_delivery()`,
  ];
}

/**
 * Creates the schema when missing (under an advisory lock: instances starting at once take
 * turns), records its version, and refuses a database of a newer layout.
 */
export async function ensureSchema(client: pg.ClientBase, schema: string): Promise<void> {
  const { rows } = await client.query<{ encoding: string }>("SELECT current_setting('server_encoding') AS encoding");
  if (rows[0]?.encoding !== "UTF8") {
    throw new Error(`postgres store: the database encoding must be UTF8 (it is ${rows[0]?.encoding})`);
  }
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`gateway-schema:${schema}`]);
    const version = await pgSchemaVersion(client, schema);
    if (version !== undefined) {
      if (version > PG_SCHEMA_VERSION) {
        throw new Error(
          `postgres store: schema ${schema} is at version ${version}, newer than this gateway's ${PG_SCHEMA_VERSION}`,
        );
      }
      if (version === PG_SCHEMA_VERSION) {
        await client.query("COMMIT");
        return;
      }
    }
    if (version === undefined) {
      for (const statement of statements(schema)) await client.query(statement);
    } else {
      // Only the steps: the creation statements would also replace the delivery-count trigger,
      // whose lock stops the deliveries of running instances until this transaction ends.
      for (const step of MIGRATIONS) {
        if (step.version > version) for (const statement of step.statements(schema)) await client.query(statement);
      }
    }
    await client.query(
      `INSERT INTO ${schema}.schema_version (one, version) VALUES (true, $1)
        ON CONFLICT (one) DO UPDATE SET version = excluded.version, updated_at = now()`,
      [PG_SCHEMA_VERSION],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/**
 * `gateway migrate` on PostgreSQL: the layout found and the steps to this release's, run unless
 * `dryRun` (the same `ensureSchema` a store runs when it opens). A layout newer than this
 * gateway's is refused with the error `ensureSchema` throws.
 */
export async function migratePgSchema(
  options: PostgresOptions,
  dryRun: boolean,
): Promise<{ from: number | undefined; steps: string[] }> {
  const schema = resolveSchema(options.schema);
  const client = new pg.Client(clientConfig(options));
  client.on("error", () => {});
  await client.connect();
  try {
    const from = await pgSchemaVersion(client, schema);
    if (from !== undefined && from > PG_SCHEMA_VERSION) {
      throw new Error(
        `postgres store: schema ${schema} is at version ${from}, newer than this gateway's ${PG_SCHEMA_VERSION}`,
      );
    }
    const steps = from === undefined || from === PG_SCHEMA_VERSION ? [] : pgMigrationSteps(from);
    if (!dryRun && steps.length > 0) await ensureSchema(client, schema);
    return { from, steps };
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Opens the pool of a store or outbox, creates the schema when missing and runs `check` on the
 * same connection; a failure of either ends the pool before it is thrown.
 */
export async function openSchemaPool(
  options: PostgresOptions,
  check?: (client: pg.PoolClient) => Promise<void>,
): Promise<pg.Pool> {
  const pool = createPool(options);
  try {
    const client = await pool.connect();
    try {
      await ensureSchema(client, resolveSchema(options.schema));
      await check?.(client);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  return pool;
}
