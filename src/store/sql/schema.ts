/**
 * The SQLite schema of the embedded store: events, dedupe marks, small shared values, delivery
 * records, destination states, per-state delivery counts and a few named values (routing cursor,
 * sequence floor); the statements are in event-sql.ts and src/delivery/sql/outbox-sql.ts. Plain SQL strings, no runtime imports: the Node driver
 * (`adapters/store/sqlite/`) runs them through better-sqlite3, and a Cloudflare Durable Object
 * can run the same statements through `ctx.storage.sql.exec`. That is why nothing here uses
 * PRAGMA, ATTACH, BEGIN/COMMIT or extensions: durability and transactions are the runtime's job
 * (docs/storage.md#the-sqlite-store).
 *
 * Whole records are stored as JSON text next to the columns that queries filter on, so a
 * record is read back exactly as it was written and every filter has an index.
 */

/** Bumped when the schema changes incompatibly; stored in `meta` under `schema_version`. */
export const SCHEMA_VERSION = 1;

/** Statements that create the schema; idempotent (safe on every open). */
export const SCHEMA_STATEMENTS: readonly string[] = [
  // seq is assigned by the driver (strictly increasing, never reused after a purge: see meta
  // `seq_floor`), so the table needs no AUTOINCREMENT bookkeeping.
  `CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source_id TEXT NOT NULL,
    type TEXT NOT NULL,
    subject TEXT,
    external_id TEXT,
    received_at INTEGER NOT NULL,
    record TEXT NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS events_by_source ON events (source_id, seq)",
  "CREATE INDEX IF NOT EXISTS events_by_type ON events (type, seq)",
  "CREATE INDEX IF NOT EXISTS events_by_subject ON events (subject, seq) WHERE subject IS NOT NULL",
  "CREATE INDEX IF NOT EXISTS events_by_external_id ON events (external_id, seq) WHERE external_id IS NOT NULL",
  "CREATE INDEX IF NOT EXISTS events_by_received_at ON events (received_at)",
  // A recorded upstream identity (claims in flight are the driver's, in memory).
  `CREATE TABLE IF NOT EXISTS marks (
    key TEXT PRIMARY KEY,
    event_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID`,
  "CREATE INDEX IF NOT EXISTS marks_by_expiry ON marks (expires_at)",
  `CREATE TABLE IF NOT EXISTS kv (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID`,
  "CREATE INDEX IF NOT EXISTS kv_by_expiry ON kv (expires_at)",
  `CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  ) WITHOUT ROWID`,
  // A rowid table on purpose: records are appended in creation order (sequential pages), and
  // only the small key index takes the random (event id) inserts.
  `CREATE TABLE IF NOT EXISTS deliveries (
    event_id TEXT NOT NULL,
    destination_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    record TEXT NOT NULL
  )`,
  "CREATE UNIQUE INDEX IF NOT EXISTS deliveries_by_key ON deliveries (event_id, destination_id)",
  "CREATE INDEX IF NOT EXISTS deliveries_by_destination ON deliveries (destination_id, seq)",
  // The partial indexes name every final state (`skipped` came with transforms: the older indexes go).
  "DROP INDEX IF EXISTS deliveries_active",
  "DROP INDEX IF EXISTS deliveries_terminal",
  "CREATE INDEX IF NOT EXISTS deliveries_open ON deliveries (seq) WHERE state NOT IN ('delivered', 'dead', 'skipped')",
  "CREATE INDEX IF NOT EXISTS deliveries_final ON deliveries (updated_at) WHERE state IN ('delivered', 'dead', 'skipped')",
  `CREATE TABLE IF NOT EXISTS destination_states (
    id TEXT PRIMARY KEY,
    record TEXT NOT NULL
  ) WITHOUT ROWID`,
  // Counts per destination and state, kept by triggers in the same transaction as the change,
  // so /metrics never scans millions of records.
  `CREATE TABLE IF NOT EXISTS delivery_counts (
    destination_id TEXT NOT NULL,
    state TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (destination_id, state)
  ) WITHOUT ROWID`,
  `CREATE TRIGGER IF NOT EXISTS deliveries_count_insert AFTER INSERT ON deliveries BEGIN
    INSERT INTO delivery_counts (destination_id, state, n) VALUES (NEW.destination_id, NEW.state, 1)
      ON CONFLICT (destination_id, state) DO UPDATE SET n = n + 1;
  END`,
  `CREATE TRIGGER IF NOT EXISTS deliveries_count_update AFTER UPDATE OF state ON deliveries
    WHEN OLD.state <> NEW.state BEGIN
    UPDATE delivery_counts SET n = n - 1 WHERE destination_id = OLD.destination_id AND state = OLD.state;
    INSERT INTO delivery_counts (destination_id, state, n) VALUES (NEW.destination_id, NEW.state, 1)
      ON CONFLICT (destination_id, state) DO UPDATE SET n = n + 1;
  END`,
  `CREATE TRIGGER IF NOT EXISTS deliveries_count_delete AFTER DELETE ON deliveries BEGIN
    UPDATE delivery_counts SET n = n - 1 WHERE destination_id = OLD.destination_id AND state = OLD.state;
  END`,
];

/** Named integer values in `meta`. */
export const META = {
  schemaVersion: "schema_version",
  /** The highest seq ever assigned durably: seq never goes back, even when retention removed every event. */
  seqFloor: "seq_floor",
  /** The outbox routing cursor. */
  cursor: "routing_cursor",
} as const;

export const META_SQL = {
  get: "SELECT value FROM meta WHERE key = ?",
  set: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  /** Sets to the larger of the stored and the given value. */
  raise:
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
} as const;
