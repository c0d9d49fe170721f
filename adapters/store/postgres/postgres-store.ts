/**
 * The `postgres` store driver: the event log, dedupe claims and marks and the shared kv on
 * PostgreSQL (schema: pg-schema.ts), for several gateway instances on one database. The outbox
 * (adapters/outbox/postgres/) and the live hub (adapters/hub/postgres.ts) of the same name share
 * its options (docs/several-instances.md).
 *
 * - A claim is one row of one statement (insert, or take over an expired claim or mark), so
 *   exactly one of several instances receiving one delivery gets `claimed`; the claims that
 *   arrive together share a statement (`SQL.claim`). Claims (and their releases) commit
 *   without waiting for the disk (`synchronous_commit = off`, their own connections): a 202
 *   needs the claim on disk only together with the event, and the append's synchronous commit
 *   gives that (see `SQL.claim`). That saves one WAL flush per webhook.
 * - Appends are group-committed per instance: the appends that arrive while a transaction is in
 *   flight go together in the next one. One transaction takes the `last_seq` row lock, inserts
 *   the new events with the next seqs, writes their dedupe marks (replacing the claims) and moves
 *   the counter, in one statement; `append` resolves after COMMIT returned, and every session
 *   runs with `synchronous_commit = on`, so an acknowledged event is on disk. The row lock is
 *   held until the commit is visible, which makes seq order the commit order across instances.
 * - Content filters are pushed down as JSONB (filter-to-jsonb.ts) and every filtered read is
 *   finished in memory with the compiled predicate, so answers are exact even where the
 *   translation is not.
 * - Retention deletes in batches of autocommitted statements that take no lock appends need.
 */
import type pg from "pg";
import { createEventFilter } from "../../../src/filters/event-filter.ts";
import type {
  AppendResult,
  ClaimResult,
  EventPage,
  EventQuery,
  EventRecord,
  StoreDriver,
  StoreFactory,
  StoreWiring,
} from "../../../src/store/contract.ts";
import { StoreUnavailableError } from "../../../src/store/contract.ts";
import { createEventSummarizer } from "../../../src/store/match-event-query.ts";
import { EVENT_SQL, type EventRow, eventFromRow } from "../../../src/store/sql/event-sql.ts";
import {
  createPool,
  inTransaction,
  type PostgresOptions,
  pgBytes,
  prepared,
  toPg,
  unavailable,
} from "./pg-connection.ts";
import { buildPgListQuery, buildPgReadAfterQuery, eventColumns } from "./pg-event-queries.ts";
import { openSchemaPool } from "./pg-schema.ts";

export interface PostgresStoreOptions extends PostgresOptions, StoreWiring {
  /** Clock for TTLs and windows, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Told once at open when the server could lose acknowledged events (`fsync = off`). */
  warn?: (message: string) => void;
}

/** Appends per transaction at most. */
const APPEND_BATCH = 256;
/**
 * Characters of records and filter documents per append transaction at most (a lone larger
 * event goes alone). Without it a burst of large webhooks (the default body limit is 1 MiB) made
 * one statement of up to 256 of them, hundreds of MiB held in memory at once; `pg` took longer
 * to build that statement's message (after the lock's answer) than the append's idle limit, so
 * PostgreSQL ended the transaction and every webhook of the group got 503, again at every retry
 * (256 of 300 concurrent appends of 1 MB events; test/store/postgres-append-groups.test.ts).
 */
const APPEND_GROUP_CHARS = 4 * 1024 * 1024;
/** Claims per statement at most. */
const CLAIM_BATCH = 256;
/** Claim statements in flight at once (one being executed while the next is on the wire). */
const CLAIM_STATEMENTS_IN_FLIGHT = 2;
/** Rows per retention statement. */
const PURGE_BATCH = 1_000;
/** Ids per removal or redaction statement. */
const ID_BATCH = 500;

/** Takes the journal counter's row lock until the transaction ends; answers the last seq. */
const SQL_LOCK_SEQ = "UPDATE meta SET value = value WHERE key = 'last_seq' RETURNING value";

const SQL = {
  /**
   * Run on the claim pool, whose sessions commit with `synchronous_commit = off`: COMMIT returns
   * once the claim is visible to every session (so a second instance sees it at once and gets
   * `in_progress`), before its WAL record is flushed. That is safe because nothing acknowledged
   * rests on the claim alone. A 202 follows the append's synchronous COMMIT, which flushes the
   * WAL up to its own commit record, and WAL is one sequence: every record before it, this
   * claim's included, is on disk by then. A crash before that loses at most claims whose
   * webhooks got no 202 (their senders retry, and a retry claims anew); a duplicate answer
   * (200) comes from a mark written by an append, never from a claim. Should the server crash
   * after the append's flush, the claim is long since replaced by the mark. The existing mark
   * is looked up only for the keys not claimed (a claimed key had none, or an expired one).
   */
  claim: `WITH input AS (
      SELECT * FROM unnest($1::bytea[], $2::bigint[]) WITH ORDINALITY AS u(key, expires_at, ord)),
    taken AS (
      INSERT INTO marks (key, event_id, expires_at) SELECT key, NULL, expires_at FROM input ORDER BY key
      ON CONFLICT (key) DO UPDATE SET event_id = NULL, expires_at = excluded.expires_at
      WHERE marks.expires_at <= $3
      RETURNING key)
    SELECT i.ord, t.key IS NOT NULL AS claimed,
      CASE WHEN t.key IS NULL THEN (SELECT m.event_id FROM marks m WHERE m.key = i.key AND m.expires_at > $3) END AS event_id
      FROM input i LEFT JOIN taken t ON t.key = i.key`,
  release: "DELETE FROM marks WHERE key = $1 AND event_id IS NULL",
  /**
   * The append of up to `rows` events (`appendStatement` below). The events of ids not recorded
   * yet get the next seqs in input order; ids recorded before answer with their seq, found by
   * the same probe of `events_id_key` (the statement's snapshot does not see its own inserts).
   * The probe is a subquery per input row, not a join: the statement runs a generic plan made
   * when a connection first runs it, often on a young, small table, and for a join that plan
   * was a hash join over a sequential scan of `events`, read whole by every append from then on
   * (18 % of the server's CPU per event at 12,000 events, growing with the log). A subquery on
   * the unique key is an index probe whatever the statistics said.
   */
  append: (rows: number) => {
    // $1 the seq before the batch, $2..$4 the marks (arrays: keys, event ids, expiries), then 8
    // parameters per event row. A row whose id is NULL is padding (see `appendStatement`).
    const values: string[] = [];
    for (let r = 0; r < rows; r++) {
      const p = 5 + r * 8;
      values.push(
        `($${p}::text, $${p + 1}::text, $${p + 2}::text, $${p + 3}::text, $${p + 4}::text, $${p + 5}::bigint, $${p + 6}::text, $${p + 7}::jsonb, ${r + 1})`,
      );
    }
    return `WITH input AS (
      SELECT * FROM (VALUES ${values.join(", ")})
        AS u(id, source_id, type, subject, external_id, received_at, record, doc, ord) WHERE id IS NOT NULL),
    probed AS (
      SELECT i.*, (SELECT e.seq FROM events e WHERE e.id = i.id) AS recorded FROM input i),
    fresh AS (
      SELECT p.*, row_number() OVER (ORDER BY p.ord) AS rn FROM probed p WHERE p.recorded IS NULL),
    inserted AS (
      INSERT INTO events (seq, id, source_id, type, subject, external_id, received_at, record, doc)
      SELECT $1 + rn, id, source_id, type, subject, external_id, received_at, record, doc FROM fresh
      RETURNING id, seq),
    counter AS (
      UPDATE meta SET value = $1 + (SELECT count(*) FROM fresh) WHERE key = 'last_seq'),
    marked AS (
      INSERT INTO marks (key, event_id, expires_at)
      SELECT * FROM unnest($2::bytea[], $3::text[], $4::bigint[]) AS m(key, event_id, expires_at) ORDER BY key
      ON CONFLICT (key) DO UPDATE SET event_id = excluded.event_id, expires_at = excluded.expires_at)
    SELECT id, seq, true AS inserted FROM inserted
    UNION ALL SELECT id, recorded, false FROM probed WHERE recorded IS NOT NULL`;
  },
  lastSeq: "SELECT value FROM meta WHERE key = 'last_seq'",
  purgeEvents: toPg(EVENT_SQL.purgeBatch),
  purgeMarks: toPg(EVENT_SQL.purgeMarksBatch),
  purgeKv: toPg(EVENT_SQL.purgeKvBatch),
  remove: "DELETE FROM events WHERE id = ANY($1::text[])",
  redact: `UPDATE events e SET type = u.type, subject = u.subject, external_id = u.external_id, record = u.record, doc = u.doc
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) AS u(id, type, subject, external_id, record, doc)
    WHERE e.id = u.id`,
  kvGet: toPg(EVENT_SQL.kvGet),
  kvSet: toPg(EVENT_SQL.kvSet),
  kvSetIfAbsent: toPg(EVENT_SQL.kvSetIfAbsent),
  kvDelete: toPg(EVENT_SQL.kvDelete),
  getById: toPg(EVENT_SQL.getById),
} as const;

/** The claim statement's text (its plan is checked by test/store/postgres-plans.test.ts). */
export const CLAIM_SQL = SQL.claim;

/**
 * The statements of the ingress and live paths, prepared once per connection (parse and plan
 * skipped from then on): each is run for every webhook or every wake-up.
 */
const STATEMENTS = {
  claim: prepared(SQL.claim),
  release: prepared(SQL.release),
  getById: prepared(SQL.getById),
  lastSeq: prepared(SQL.lastSeq),
  readAfter: prepared(toPg(buildPgReadAfterQuery(0, 1).sql)),
};

/**
 * The append statement for `rows` events, prepared by size class: a batch of n events runs the
 * statement of the next power of two (1, 2, 4, ... APPEND_BATCH rows) with the rows beyond n
 * padded with NULLs, so a connection prepares at most nine texts. Each value of an event is a
 * parameter of its own, not an element of an array: neither `pg` (escaping every record and
 * document into an array literal) nor PostgreSQL (`array_in`, parsing it back) has to walk the
 * text character by character.
 */
const appendStatements = new Map<number, { name: string; text: string }>();
export function appendStatement(rows: number): { name: string; text: string; rows: number } {
  let size = 1;
  while (size < rows) size *= 2;
  let statement = appendStatements.get(size);
  if (!statement) {
    statement = prepared(SQL.append(size));
    appendStatements.set(size, statement);
  }
  return { ...statement, rows: size };
}

/**
 * Opens an append's transaction and takes the journal counter's row lock, in one round trip.
 * The append statements are planned once per connection (a generic plan): their plan does not
 * depend on the values, and the custom plans PostgreSQL would otherwise make for the first runs
 * of each size class cost more than the appends. The lock is taken by a statement of its own,
 * before the append's: under READ COMMITTED the append's snapshot is taken when it starts, so it
 * sees every event committed by the holder the lock waited for.
 *
 * The lock is held between round trips, so a gateway that stops between them (a VM pause, a
 * stop-the-world pause, SIGSTOP) would hold every instance's appends for as long as it stays
 * stopped: PostgreSQL ends such a transaction once it has been idle for
 * `APPEND_IDLE_LIMIT` (its appends fail with 503 and their senders retry; the other instances go
 * on). A live gateway sends its next statement within milliseconds, even under heavy load.
 * Tested by test/scaleout/postgres-paused-instance.test.ts.
 */
const APPEND_IDLE_LIMIT = "5s";
const BEGIN_APPEND = `BEGIN; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL idle_in_transaction_session_timeout = '${APPEND_IDLE_LIMIT}'; ${SQL_LOCK_SEQ}`;

/**
 * The claim pool's sessions plan their statements once (a generic plan). Left to itself,
 * PostgreSQL plans the claim statement anew at every run: its generic plan's estimate (an
 * `unnest` of arrays of unknown length) never looks cheap enough next to the custom plans,
 * and planning that statement cost more server CPU than running it for the one to few keys of
 * a typical batch. The plan does not depend on the values: the keys are probed through the
 * `marks` primary key whatever their number (at most CLAIM_BATCH). The pool runs only the claim
 * and its release.
 */
const CLAIM_SESSION = { plan_cache_mode: "force_generic_plan" };

interface PendingClaim {
  key: string;
  expiresAt: number;
  resolve(result: ClaimResult): void;
  reject(error: unknown): void;
}

interface PendingAppend {
  record: EventRecord;
  /** The row's values (`eventColumns`), made when its group is formed. */
  columns?: ReturnType<typeof eventColumns>;
  dedupeKey: string;
  expiresAt: number;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/** Opens the pool, creates the schema when missing, and returns the driver. */
export const postgresStore: StoreFactory<PostgresStoreOptions> = async (options) => {
  // The claims' connections are carved out of poolSize (half of it): appends are group-committed,
  // one transaction in flight at a time, so the other half serves them and the reads. With a
  // single connection the claims share it and commit synchronously (correct, one flush more).
  const size = options.poolSize ?? 10;
  const claimSize = size >= 2 ? Math.floor(size / 2) : 0;
  const pool = await openSchemaPool({ ...options, poolSize: size - claimSize }, async (client) => {
    if (options.warn) {
      const { rows } = await client.query<{ fsync: string }>("SELECT current_setting('fsync') AS fsync");
      if (rows[0]?.fsync !== "on") {
        options.warn(
          "PostgreSQL runs with fsync = off: commits are not flushed to disk, so a crash of its machine can lose acknowledged events",
        );
      }
    }
  });
  const claimPool = claimSize > 0 ? createPool(options, claimSize, false, CLAIM_SESSION) : pool;
  return createPostgresStore(pool, options, claimPool);
};

/**
 * The driver on an opened pool whose schema exists; `claimPool` (default: `pool`) runs the
 * dedupe claims and releases, best with `synchronous_commit = off` sessions (`SQL.claim`).
 */
export function createPostgresStore(
  pool: pg.Pool,
  options: PostgresStoreOptions = {},
  claimPool: pg.Pool = pool,
): StoreDriver {
  const now = options.now ?? Date.now;
  const summarizeEvent = createEventSummarizer(options.services);
  const name = "postgres";
  let closed = false;
  let queue: PendingAppend[] = [];
  let flushing: Promise<void> | undefined;
  let claims: PendingClaim[] = [];
  let claimsInFlight = 0;

  const query = async <R extends pg.QueryResultRow>(
    sql: string | { name: string; text: string },
    params: unknown[] = [],
    on: pg.Pool = pool,
  ) => {
    try {
      return typeof sql === "string" ? await on.query<R>(sql, params) : await on.query<R>({ ...sql, values: params });
    } catch (error) {
      throw unavailable(`${name} store`, error);
    }
  };

  const columnsOf = (item: PendingAppend) => {
    item.columns ??= eventColumns(item.record, summarizeEvent);
    return item.columns;
  };

  /** One transaction for a batch of appends; each caller gets its own answer. */
  const commit = async (batch: PendingAppend[]) => {
    // One row per id (the first wins; later ones answer as not inserted), one mark per key.
    const firstOfId = new Map<string, PendingAppend>();
    for (const item of batch) if (!firstOfId.has(item.record.id)) firstOfId.set(item.record.id, item);
    const columns = [...firstOfId.values()].map((item) => columnsOf(item));
    const marks = new Map<string, { eventId: string; expiresAt: number }>();
    for (const item of batch) marks.set(item.dedupeKey, { eventId: item.record.id, expiresAt: item.expiresAt });
    const rows = await inTransaction(
      pool,
      async (client, opened) => {
        const last = Number((opened.rows[0] as { value?: number } | undefined)?.value ?? 0);
        const statement = appendStatement(columns.length);
        const values: unknown[] = [
          last,
          [...marks.keys()].map(pgBytes),
          [...marks.values()].map((m) => m.eventId),
          [...marks.values()].map((m) => m.expiresAt),
        ];
        for (const c of columns) {
          values.push(c.id, c.sourceId, c.type, c.subject, c.externalId, c.receivedAt, c.record, c.doc);
        }
        for (let pad = columns.length; pad < statement.rows; pad++) {
          values.push(null, null, null, null, null, null, null, null);
        }
        const result = await client.query<{ id: string; seq: number; inserted: boolean }>({
          name: statement.name,
          text: statement.text,
          values,
        });
        return result.rows;
      },
      BEGIN_APPEND,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const answered = new Set<string>();
    for (const item of batch) {
      const row = byId.get(item.record.id);
      if (!row) {
        item.reject(new StoreUnavailableError(`${name} store: append of ${item.record.id} returned no row`));
        continue;
      }
      item.resolve({ inserted: row.inserted && !answered.has(row.id), seq: Number(row.seq) });
      answered.add(row.id);
    }
  };

  /** One statement for a batch of claims; a key asked for twice in it is claimed once. */
  const claimBatch = async (batch: PendingClaim[]) => {
    const first = new Map<string, PendingClaim>();
    for (const item of batch) if (!first.has(item.key)) first.set(item.key, item);
    const items = [...first.values()];
    const { rows } = await query<{ ord: number; claimed: boolean; event_id: string | null }>(
      STATEMENTS.claim,
      [items.map((item) => pgBytes(item.key)), items.map((item) => item.expiresAt), now()],
      claimPool,
    );
    const answers = new Map<string, ClaimResult>();
    for (const row of rows) {
      const item = items[Number(row.ord) - 1];
      if (!item) continue;
      answers.set(
        item.key,
        row.claimed
          ? { status: "claimed" }
          : row.event_id
            ? { status: "duplicate", id: row.event_id }
            : { status: "in_progress" },
      );
    }
    for (const item of batch) {
      const answer = answers.get(item.key);
      if (!answer) {
        item.reject(new StoreUnavailableError(`${name} store: the claim statement returned no row`));
      } else if (answer.status === "claimed" && first.get(item.key) !== item) {
        // The same key twice in one batch: the first holds the claim, the others wait for it.
        item.resolve({ status: "in_progress" });
      } else {
        item.resolve(answer);
      }
    }
  };

  const sendClaims = () => {
    while (claims.length > 0 && claimsInFlight < CLAIM_STATEMENTS_IN_FLIGHT) {
      const batch = claims.slice(0, CLAIM_BATCH);
      claims = claims.slice(batch.length);
      claimsInFlight++;
      claimBatch(batch)
        .catch((error) => {
          const failure = unavailable(`${name} store`, error);
          for (const item of batch) item.reject(failure);
        })
        .finally(() => {
          claimsInFlight--;
          sendClaims();
        });
    }
  };

  const flush = async () => {
    while (queue.length > 0) {
      // Up to APPEND_BATCH events and APPEND_GROUP_CHARS characters; at least one event.
      // Its rows' values are made here, group by group (not for the whole queue at once).
      let take = 0;
      let chars = 0;
      let failed: { item: PendingAppend; error: unknown } | undefined;
      while (take < queue.length && take < APPEND_BATCH) {
        const item = queue[take] as PendingAppend;
        try {
          const c = columnsOf(item);
          chars += c.record.length + (c.doc?.length ?? 0);
        } catch (error) {
          failed = { item, error };
          break;
        }
        if (take > 0 && chars > APPEND_GROUP_CHARS) break;
        take++;
      }
      if (failed && take === 0) {
        // A record that cannot be written as a row fails alone.
        queue = queue.slice(1);
        failed.item.reject(unavailable(`${name} store`, failed.error));
        continue;
      }
      const batch = queue.slice(0, take);
      queue = queue.slice(take);
      try {
        await commit(batch);
      } catch (error) {
        const failure = unavailable(`${name} store`, error);
        for (const item of batch) item.reject(failure);
      }
    }
    flushing = undefined;
  };

  /** Reads pages through `read` until `want` rows match the filter (all rows when there is none). */
  const collect = async (
    filterNode: EventQuery["filter"],
    want: number,
    read: (bound: number | undefined, limit: number) => Promise<EventRecord[]>,
  ): Promise<EventRecord[]> => {
    if (filterNode === undefined) return read(undefined, want);
    const filter = createEventFilter(filterNode);
    const out: EventRecord[] = [];
    const batch = Math.max(want, 100);
    let bound: number | undefined;
    for (;;) {
      const page = await read(bound, batch);
      for (const record of page) {
        if (filter.matchesRecord(record)) out.push(record);
        if (out.length === want) return out;
      }
      if (page.length < batch) return out;
      bound = (page[page.length - 1] as EventRecord).seq;
    }
  };

  const rowsOf = (rows: EventRow[]) => rows.map((row) => eventFromRow(row));

  return {
    name,
    filterPushdown: true,
    claim(dedupeKey, claimTtlMs): Promise<ClaimResult> {
      if (closed) return Promise.reject(new StoreUnavailableError(`${name} store is closed`));
      return new Promise<ClaimResult>((resolve, reject) => {
        claims.push({ key: dedupeKey, expiresAt: now() + claimTtlMs, resolve, reject });
        sendClaims();
      });
    },
    append(record, dedupeKey, dedupeTtlMs) {
      if (closed) return Promise.reject(new StoreUnavailableError(`${name} store is closed`));
      return new Promise<AppendResult>((resolve, reject) => {
        queue.push({ record, dedupeKey, expiresAt: now() + dedupeTtlMs, resolve, reject });
        flushing ??= flush();
      });
    },
    async release(dedupeKey) {
      await query(STATEMENTS.release, [pgBytes(dedupeKey)], claimPool);
    },
    async get(id) {
      const { rows } = await query<EventRow>(STATEMENTS.getById, [id]);
      return rows[0] ? eventFromRow(rows[0]) : undefined;
    },
    async list(q): Promise<EventPage> {
      const found = await collect(q.filter, q.limit + 1, async (bound, limit) => {
        const before = bound ?? q.after;
        const { sql, params } = buildPgListQuery(q, before, limit);
        return rowsOf((await query<EventRow>(toPg(sql), params)).rows);
      });
      const events = found.slice(0, q.limit);
      return { events, next: found.length > q.limit ? (events[events.length - 1] as EventRecord).seq : null };
    },
    async readAfter(afterSeq, limit, filter = {}) {
      return collect(filter.filter, limit, async (bound, size) => {
        const { sql, params } = buildPgReadAfterQuery(bound ?? afterSeq, size, filter);
        const text = toPg(sql);
        // The unfiltered read (the live hub's and the router's, at every wake-up) is prepared.
        return rowsOf(
          (await query<EventRow>(text === STATEMENTS.readAfter.text ? STATEMENTS.readAfter : text, params)).rows,
        );
      });
    },
    async lastSeq() {
      const { rows } = await query<{ value: number }>(STATEMENTS.lastSeq);
      return Number(rows[0]?.value ?? 0);
    },
    async purge(before) {
      let removed = 0;
      for (let round = 0; round < 100_000; round++) {
        const n = (await query(SQL.purgeEvents, [before, PURGE_BATCH])).rowCount ?? 0;
        removed += n;
        if (n < PURGE_BATCH) break;
      }
      const t = now();
      for (const sql of [SQL.purgeMarks, SQL.purgeKv]) {
        for (let round = 0; round < 100_000; round++) {
          if (((await query(sql, [t, PURGE_BATCH])).rowCount ?? 0) < PURGE_BATCH) break;
        }
      }
      return removed;
    },
    async removeEvents(ids) {
      let removed = 0;
      for (let i = 0; i < ids.length; i += ID_BATCH) {
        removed += (await query(SQL.remove, [ids.slice(i, i + ID_BATCH)])).rowCount ?? 0;
      }
      return removed;
    },
    async redactEvents(records) {
      let replaced = 0;
      for (let i = 0; i < records.length; i += ID_BATCH) {
        const columns = records.slice(i, i + ID_BATCH).map((record) => eventColumns(record, summarizeEvent));
        replaced +=
          (
            await query(SQL.redact, [
              columns.map((c) => c.id),
              columns.map((c) => c.type),
              columns.map((c) => c.subject),
              columns.map((c) => c.externalId),
              columns.map((c) => c.record),
              columns.map((c) => c.doc),
            ])
          ).rowCount ?? 0;
      }
      return replaced;
    },
    async compact() {
      // Prunes the dead row versions an UPDATE or DELETE leaves behind (the erased content: events,
      // the scrubbed delivery records, the finished erasure request in kv), so the tables no longer
      // hold them as rows; see docs/storage.md for WAL, replicas and backups.
      await query("VACUUM events, deliveries, kv");
    },
    async ping() {
      await query("SELECT 1");
    },
    async kvGet(key) {
      const { rows } = await query<{ value: Buffer }>(SQL.kvGet, [pgBytes(key), now()]);
      return rows[0] ? rows[0].value.toString("utf8") : undefined;
    },
    async kvSet(key, value, ttlMs) {
      await query(SQL.kvSet, [pgBytes(key), pgBytes(value), now() + ttlMs]);
    },
    async kvSetIfAbsent(key, value, ttlMs) {
      const t = now();
      return ((await query(SQL.kvSetIfAbsent, [pgBytes(key), pgBytes(value), t + ttlMs, t])).rowCount ?? 0) === 1;
    },
    async kvDelete(key) {
      await query(SQL.kvDelete, [pgBytes(key)]);
    },
    async close() {
      if (closed) return;
      closed = true;
      await flushing;
      await Promise.all([pool.end(), claimPool === pool ? undefined : claimPool.end()]);
    },
  };
}
