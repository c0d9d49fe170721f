/**
 * The connection side of the PostgreSQL drivers (store, outbox, hub): options as the
 * configuration gives them, one `pg` pool per driver with the session settings every statement
 * relies on, and the mapping of `?` statements (the SQLite dialect of src/store/sql/ and
 * src/delivery/sql/) to `$n` parameters.
 *
 * Client: `pg` (node-postgres). It is the most used PostgreSQL client for Node, pure JavaScript,
 * with a pool, TLS options passed through to `tls.connect`, and LISTEN/NOTIFY on a dedicated
 * client, which the hub needs.
 *
 * Every session runs with `synchronous_commit = on` (a commit returns only once its WAL is
 * flushed, whatever the server's default), and `search_path` set to the configured schema, so
 * the shared SQL strings stay unqualified.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { StoreUnavailableError } from "../../../src/store/contract.ts";

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database`. Default: the `DATABASE_URL` environment variable. */
  url?: string;
  /** Connections per pool (the store, the outbox and the hub open one each). Default 10. */
  poolSize?: number;
  /** The schema holding the gateway's tables, created when missing. Default `gateway`. */
  schema?: string;
  /**
   * TLS, as `pg` takes it: `true`, or `tls.connect` options (`ca`, `rejectUnauthorized`, ...).
   * A URL's `sslmode` parameter works too.
   */
  ssl?: boolean | Record<string, unknown>;
  /** Milliseconds a connection attempt may take. Default 5000. */
  connectTimeoutMs?: number;
  /** Milliseconds one statement may run before the server cancels it. Default 30000. */
  statementTimeoutMs?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The URL to use; throws a setup error when there is none. */
export function resolvePostgresUrl(url: string | undefined): string {
  const resolved = url ?? process.env.DATABASE_URL;
  if (!resolved) throw new Error("postgres store: no url (set store.url or DATABASE_URL)");
  if (!/^postgres(ql)?:\/\//.test(resolved)) throw new Error("postgres store: url must start with postgres://");
  return resolved;
}

/** The schema name; a plain lower-case identifier so it needs no quoting anywhere. */
export function resolveSchema(schema: string | undefined): string {
  const resolved = schema ?? "gateway";
  if (!SCHEMA_NAME.test(resolved)) {
    throw new Error(`postgres store: schema must match ${SCHEMA_NAME} (got ${JSON.stringify(resolved)})`);
  }
  return resolved;
}

/** Bigint columns (seq, times) as numbers: every value the gateway stores is below 2^53. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (value: string) => Number(value);
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads
    return (pg.types.getTypeParser as any)(oid, format);
  },
};

/** Session settings beyond the ones every session has (`-c name=value` at connection). */
export type SessionSettings = Record<string, string>;

/**
 * The client settings shared by the pool and the hub's listener. `synchronousCommit: false` is
 * for the one pool whose commits need not wait for the disk (the store's dedupe claims: see
 * postgres-store.ts for why that is safe); every other session commits synchronously.
 * `settings`: more session settings, for a pool that runs only statements known to want them.
 */
export function clientConfig(
  options: PostgresOptions,
  synchronousCommit = true,
  settings: SessionSettings = {},
): pg.ClientConfig {
  const schema = resolveSchema(options.schema);
  return {
    connectionString: resolvePostgresUrl(options.url),
    ssl: options.ssl as pg.ClientConfig["ssl"],
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    // The server cancels a slow statement itself; this bounds the wait for a server that no
    // longer answers at all (frozen, or gone without closing the connection).
    query_timeout: (options.statementTimeoutMs ?? 30_000) + 5_000,
    options: [
      `-c search_path=${schema} -c synchronous_commit=${synchronousCommit ? "on" : "off"}`,
      ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
    ].join(" "),
    application_name: "gateway",
    keepAlive: true,
    types,
  };
}

/**
 * A pool with the session settings; a dropped connection is replaced, never fatal. `pg` emits
 * a dead connection's error (a server shutdown sends FATAL 57P01 to every session) on its
 * client; the pool listens only while the client is idle, and an `error` event nobody listens
 * to ends the process. So every client gets a listener of its own for its whole life: the
 * error then only fails the client's queries (the statement running, and any later one with
 * "not queryable"), which the drivers answer as StoreUnavailableError (503), and the broken
 * client is dropped when it is released (inTransaction, pool.query).
 */
export function createPool(
  options: PostgresOptions,
  size = options.poolSize ?? 10,
  synchronousCommit = true,
  settings: SessionSettings = {},
): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(options, synchronousCommit, settings),
    max: size,
    idleTimeoutMillis: 30_000,
  });
  keepErrorsLocal(pool);
  return pool;
}

/** Makes a dead connection of `pool` fail its queries instead of the process (see createPool). */
export function keepErrorsLocal(pool: pg.Pool): void {
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
}

/** Replaces each `?` outside quotes with `$1`, `$2`, ... */
export function toPg(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = "";
  for (const c of sql) {
    if (c === "'") quoted = !quoted;
    out += c === "?" && !quoted ? `$${++n}` : c;
  }
  return out;
}

/**
 * A statement prepared once per connection and run by name afterwards (parse and plan are
 * skipped from the second run on). Only for fixed statement texts: every distinct text stays
 * prepared on every connection for its life, so statements built from user input must not be
 * named. The name is a digest of the text, so one name never stands for two texts.
 */
export function prepared(text: string): { name: string; text: string } {
  return { name: `gw_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`, text };
}

/**
 * Runs `work` in one transaction on one connection of `pool`. `begin` opens it (default
 * `BEGIN`): a caller may add statements without parameters (`SET LOCAL` settings, a first
 * statement) sent in the same round trip; `work` gets the answer of the last of them.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, opened: pg.QueryResult) => Promise<T>,
  begin = "BEGIN",
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    // Several statements in one query string answer with one result each.
    const answers = (await client.query(begin)) as pg.QueryResult | pg.QueryResult[];
    const opened = Array.isArray(answers) ? (answers[answers.length - 1] as pg.QueryResult) : answers;
    const result = await work(client, opened);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    broken = true;
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    // A connection that failed mid-transaction may be dead: let the pool drop it.
    client.release(broken ? true : undefined);
  }
}

/** Wraps a driver error as StoreUnavailableError (answered 503), keeping the message. */
export function unavailable(driver: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  return new StoreUnavailableError(`${driver}: ${error instanceof Error ? error.message : String(error)}`);
}

/** Text as a `text` column takes it: PostgreSQL text cannot hold U+0000. */
export function pgText(value: string): string;
export function pgText(value: string | undefined | null): string | null;
export function pgText(value: string | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  return value.includes("\u0000") ? value.replace(/\u0000/g, "\ufffd") : value;
}

/** A key or value kept byte for byte (any string, U+0000 included). */
export function pgBytes(value: string): Buffer {
  return Buffer.from(value, "utf8");
}
