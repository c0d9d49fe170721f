/**
 * The `postgres` outbox driver: delivery records, the routing cursor and destination states in
 * the `postgres` store's database and schema (adapters/store/postgres/pg-schema.ts), shared by
 * every gateway instance on it, no leader (docs/several-instances.md).
 *
 * - `claimDue` takes due records with `FOR UPDATE SKIP LOCKED` (instances claiming at once skip
 *   each other's rows instead of waiting) and leases them to the claimer until `now + leaseMs`;
 *   the holder renews its leases, and a dead instance's records are due again when its leases
 *   end. Per-subject ordering: a subject of an ordered destination is taken only through its
 *   oldest unfinished record, whose claimer then owns the subject (`subject_owners`) for as long
 *   as it renews a lease on one of its records.
 * - Writes are group-committed in call order: the writes made while a transaction is in flight
 *   go, in order, into the next one, and each resolves after COMMIT (`synchronous_commit = on`,
 *   except routing writes: derived state, committed asynchronously, see `ROUTING_BEGIN`). A
 *   routing write of up to 500 records alone in its flush is one statement in a transaction of
 *   its own (`routeInOne`: one round trip instead of three).
 * - The statements shared with SQLite (src/delivery/sql/outbox-sql.ts) are reused where the
 *   dialects agree; writes carry the lease and due columns only this schema has.
 */
import type pg from "pg";
import {
  type CreationLease,
  type DeliveryRecord,
  type DeliveryRef,
  type DeliveryState,
  type DestinationState,
  isTerminal,
  leasedAtCreation,
  type OutboxFactory,
  type OutboxStore,
  RoutingCursorBehindError,
} from "../../../src/delivery/outbox-contract.ts";
import { buildDeliveryListQuery, deliveryFromRow, OUTBOX_SQL } from "../../../src/delivery/sql/outbox-sql.ts";
import {
  createPool,
  inTransaction,
  type PostgresOptions,
  pgText,
  toPg,
  unavailable,
} from "../../store/postgres/pg-connection.ts";
import { openSchemaPool } from "../../store/postgres/pg-schema.ts";

export type PostgresOutboxOptions = PostgresOptions;

const TERMINAL = "('delivered', 'dead', 'skipped')";
const PURGE_BATCH = 1_000;
/** Records per write statement. */
const WRITE_BATCH = 500;
/** Records saved per write transaction (more wait for the next one). */
const TRANSACTION_RECORDS = 2_000;

const COLUMNS = "event_id, destination_id, seq, state, received_at, updated_at, record, subject, next_at";
const UNNEST = `SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[],
  $7::text[], $8::text[], $9::bigint[])`;

const SQL = {
  readCursor: "SELECT value FROM meta WHERE key = 'routing_cursor'",
  lockCursor: "SELECT value FROM meta WHERE key = 'routing_cursor' FOR UPDATE",
  /**
   * The last (or only) batch of a routing write: `create`, the cursor move ($12) and the
   * destinations' states in one statement (one round trip). The cursor row is locked already
   * (the transaction's first statement), so the lock order stays the same; every part sees the
   * statement's snapshot (the states: as they were committed when it began).
   */
  createMovingCursor: `WITH ins AS (INSERT INTO deliveries (${COLUMNS}, lease_until, lease_owner) ${UNNEST.replace(
    "$9::bigint[])",
    "$9::bigint[], $10::bigint[], $11::text[])",
  )}
    ON CONFLICT (event_id, destination_id) DO NOTHING RETURNING event_id, destination_id),
  moved AS (UPDATE meta SET value = greatest(value, $12) WHERE key = 'routing_cursor' RETURNING value)
  SELECT (SELECT coalesce(json_agg(json_build_array(event_id, destination_id)), '[]') FROM ins) AS inserted,
    (SELECT value FROM moved) AS moved,
    CASE WHEN $13::boolean
      THEN (SELECT coalesce(array_agg(record ORDER BY id), '{}') FROM destination_states) END AS states`,
  /**
   * A whole routing write of up to WRITE_BATCH records in one statement outside a transaction
   * block (its own transaction: one round trip instead of BEGIN, the statement and COMMIT). It
   * locks the cursor row first (`lock`, evaluated before the first insert: the same lock order
   * as a routing transaction), commits asynchronously (`set_config(..., true)`: this transaction
   * only; see `ROUTING_BEGIN`), and writes nothing when the stored cursor is below $14 (the one
   * the caller knows: `RoutingCursorBehindError`). `before`: the stored cursor it found.
   */
  routeInOne: `WITH lock AS (SELECT value, set_config('synchronous_commit', 'off', true) AS async
      FROM meta WHERE key = 'routing_cursor' FOR UPDATE),
  ins AS (INSERT INTO deliveries (${COLUMNS}, lease_until, lease_owner) ${UNNEST.replace(
    "$9::bigint[])",
    "$9::bigint[], $10::bigint[], $11::text[])",
  )} WHERE coalesce((SELECT value FROM lock), 0) >= $14
    ON CONFLICT (event_id, destination_id) DO NOTHING RETURNING event_id, destination_id),
  moved AS (UPDATE meta SET value = greatest(value, $12)
    WHERE key = 'routing_cursor' AND coalesce((SELECT value FROM lock), 0) >= $14 RETURNING value)
  SELECT coalesce((SELECT value FROM lock), 0) AS before,
    (SELECT coalesce(json_agg(json_build_array(event_id, destination_id)), '[]') FROM ins) AS inserted,
    (SELECT value FROM moved) AS moved,
    CASE WHEN $13::boolean
      THEN (SELECT coalesce(array_agg(record ORDER BY id), '{}') FROM destination_states) END AS states`,
  /** With each record's lease end (0: none) and owner (null): the routing instance's lease. */
  create: `INSERT INTO deliveries (${COLUMNS}, lease_until, lease_owner) ${UNNEST.replace(
    "$9::bigint[])",
    "$9::bigint[], $10::bigint[], $11::text[])",
  )}
    ON CONFLICT (event_id, destination_id) DO NOTHING RETURNING event_id, destination_id`,
  /**
   * A finished record holds no lease: a replay is due at once, not when the old lease ends.
   * "delivering" and "failed-retrying" never replace a finished state: the first is written as
   * an attempt starts, the second as one fails (a replay writes "pending" or "paused" with no
   * failures), so over a finished row they come from an instance whose lease another one took
   * over, and applying them would make the finished record due again (delivered once more).
   */
  save: `INSERT INTO deliveries (${COLUMNS}) ${UNNEST}
    ON CONFLICT (event_id, destination_id) DO UPDATE SET seq = excluded.seq, state = excluded.state,
      received_at = excluded.received_at, updated_at = excluded.updated_at, record = excluded.record,
      subject = excluded.subject, next_at = excluded.next_at,
      lease_until = CASE WHEN excluded.state IN ${TERMINAL} THEN 0 ELSE deliveries.lease_until END,
      lease_owner = CASE WHEN excluded.state IN ${TERMINAL} THEN NULL ELSE deliveries.lease_owner END
    WHERE NOT (deliveries.state IN ${TERMINAL} AND excluded.state IN ('delivering', 'failed-retrying'))`,
  /** Frees the subjects (of these destinations) that have no unfinished record left. */
  freeSubjects: `DELETE FROM subject_owners o USING unnest($1::text[], $2::text[]) AS u(destination_id, subject)
    WHERE o.destination_id = u.destination_id AND o.subject = u.subject
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.destination_id = o.destination_id AND d.subject = o.subject
        AND d.state NOT IN ${TERMINAL})`,
  get: toPg(OUTBOX_SQL.get),
  byEvent: toPg(OUTBOX_SQL.byEvent),
  active: OUTBOX_SQL.active,
  counts: `SELECT destination_id, state, sum(n)::bigint AS n FROM
      (SELECT destination_id, state, n FROM delivery_counts
        UNION ALL SELECT destination_id, state, n FROM delivery_count_changes) AS c
    GROUP BY destination_id, state HAVING sum(n) > 0`,
  /** Folds the change rows into the totals; one instance at a time (the others skip it). */
  foldCounts: `WITH folded AS (DELETE FROM delivery_count_changes RETURNING destination_id, state, n)
    INSERT INTO delivery_counts (destination_id, state, n)
    SELECT destination_id, state, sum(n) FROM folded GROUP BY destination_id, state
    ON CONFLICT (destination_id, state) DO UPDATE SET n = delivery_counts.n + excluded.n`,
  destinationStates: OUTBOX_SQL.destinationStates,
  saveDestinationState: toPg(OUTBOX_SQL.saveDestinationState),
  purge: `DELETE FROM deliveries WHERE (event_id, destination_id) IN
    (SELECT event_id, destination_id FROM deliveries
      WHERE state IN ${TERMINAL} AND updated_at < $1 ORDER BY updated_at LIMIT $2)`,
  /** Due records, earliest due first; rows another claimer holds are skipped, not waited for. */
  due: `SELECT event_id, destination_id, seq, subject, record FROM deliveries
    WHERE state NOT IN ${TERMINAL} AND greatest(next_at, lease_until) <= $1
    ORDER BY greatest(next_at, lease_until), seq, destination_id LIMIT $2
    FOR UPDATE SKIP LOCKED`,
  owners: `SELECT o.destination_id, o.subject, o.owner, o.until FROM subject_owners o
    JOIN unnest($1::text[], $2::text[]) AS u(destination_id, subject)
      ON o.destination_id = u.destination_id AND o.subject = u.subject
    ORDER BY o.destination_id, o.subject
    FOR UPDATE OF o`,
  heads: `SELECT u.destination_id, u.subject,
      (SELECT min(d.seq) FROM deliveries d WHERE d.destination_id = u.destination_id AND d.subject = u.subject
        AND d.state NOT IN ${TERMINAL}) AS head
    FROM unnest($1::text[], $2::text[]) AS u(destination_id, subject)`,
  /**
   * Per (destination, subject), the unfinished records up to seq $3 that are not leased to $4
   * now ($5): a claimer takes a record of an ordered subject only when every one of these below
   * it is taken in the same claim. A row another transaction holds locked (a claim scanning it,
   * a write) is skipped by the due scan, so without this a later record could reach a lane
   * before an older one that is still unfinished.
   */
  blockers: `SELECT d.destination_id, d.subject, d.seq FROM deliveries d
    JOIN unnest($1::text[], $2::text[], $3::bigint[]) AS u(destination_id, subject, upto)
      ON d.destination_id = u.destination_id AND d.subject = u.subject
    WHERE d.state NOT IN ${TERMINAL} AND d.seq <= u.upto
      AND NOT (d.lease_owner IS NOT DISTINCT FROM $4 AND d.lease_until > $5)
    ORDER BY d.destination_id, d.subject, d.seq`,
  lease: `UPDATE deliveries d SET lease_until = $3, lease_owner = $4
    FROM unnest($1::text[], $2::text[]) AS u(event_id, destination_id)
    WHERE d.event_id = u.event_id AND d.destination_id = u.destination_id`,
  own: `INSERT INTO subject_owners (destination_id, subject, owner, until)
    SELECT u.destination_id, u.subject, $3, $4 FROM unnest($1::text[], $2::text[]) AS u(destination_id, subject)
    ON CONFLICT (destination_id, subject) DO UPDATE SET owner = excluded.owner, until = excluded.until`,
  lockRows: `SELECT 1 FROM deliveries d JOIN unnest($1::text[], $2::text[]) AS u(event_id, destination_id)
      ON d.event_id = u.event_id AND d.destination_id = u.destination_id
    ORDER BY d.event_id COLLATE "C", d.destination_id COLLATE "C"
    FOR UPDATE OF d`,
  /**
   * Renews what is free to lock now; a row another transaction holds at this moment (a write of
   * this instance, most often) is skipped here and renewed by `renewLocked` once it is free, so a
   * renewal round never waits behind a write.
   */
  renew: `UPDATE deliveries d SET lease_until = $3
    WHERE (d.event_id, d.destination_id) IN (
      SELECT l.event_id, l.destination_id FROM deliveries l
        JOIN unnest($1::text[], $2::text[]) AS u(event_id, destination_id)
          ON l.event_id = u.event_id AND l.destination_id = u.destination_id
      WHERE l.lease_owner = $4
      FOR UPDATE OF l SKIP LOCKED)
    RETURNING d.event_id, d.destination_id, d.subject`,
  /** Which of these records are leased to $3, and until when (committed state, no lock). */
  owned: `SELECT d.event_id, d.destination_id, d.lease_until FROM deliveries d
    JOIN unnest($1::text[], $2::text[]) AS u(event_id, destination_id)
      ON d.event_id = u.event_id AND d.destination_id = u.destination_id
    WHERE d.lease_owner = $3`,
  /**
   * The rows a renewal skipped, locked waiting this time, in the one order every writer locks
   * in (no deadlock): those still leased to $4 with the lease end the renewal saw ($3). A row
   * whose lease changed meanwhile (released, renewed later, finished, taken over) is left alone.
   */
  lockLocked: `SELECT d.event_id, d.destination_id FROM deliveries d
    JOIN unnest($1::text[], $2::text[], $3::bigint[]) AS u(event_id, destination_id, seen)
      ON d.event_id = u.event_id AND d.destination_id = u.destination_id
    WHERE d.lease_owner = $4 AND d.lease_until = u.seen
    ORDER BY d.event_id COLLATE "C", d.destination_id COLLATE "C"
    FOR UPDATE OF d`,
  renewLocked: `UPDATE deliveries d SET lease_until = u.until
    FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(event_id, destination_id, until)
    WHERE d.event_id = u.event_id AND d.destination_id = u.destination_id
    RETURNING d.destination_id, d.subject, u.until`,
  renewOwners: `UPDATE subject_owners o SET until = $3
    FROM unnest($1::text[], $2::text[]) AS u(destination_id, subject)
    WHERE o.destination_id = u.destination_id AND o.subject = u.subject AND o.owner = $4`,
  renewOwnersEach: `UPDATE subject_owners o SET until = u.until
    FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(destination_id, subject, until)
    WHERE o.destination_id = u.destination_id AND o.subject = u.subject AND o.owner = $4`,
} as const;

/**
 * Opens a routing transaction: its commit is asynchronous (`synchronous_commit = off` for this
 * transaction only), and the cursor row is locked first (sent with the BEGIN: one round trip).
 * What it writes (delivery records, the routing cursor) is derived from events whose appends
 * committed synchronously; a server crash can lose its last commits (the WAL not yet flushed),
 * and then always together with everything after them, so records and cursor stay consistent
 * and the events are routed again from the stored cursor (`RoutingCursorBehindError`). The
 * delivery no longer waits for a WAL flush of its own between the append's commit and its
 * attempt. Any synchronous commit after it (the next append, a lane's write) flushes it too.
 */
const ROUTING_BEGIN = `BEGIN; SET LOCAL synchronous_commit = off; ${SQL.lockCursor}`;

/** Connections of the pool renewals use, apart from claims and writes (see `createPostgresOutbox`). */
const LEASE_POOL_SIZE = 2;
/** How long the renewal of a row another transaction holds waits for it (ms), per round. */
const LOCKED_RENEWAL_WAIT_MS = 15_000;

/** A renewal a round could not make because another transaction held the row. */
interface SkippedRenewal {
  eventId: string;
  destinationId: string;
  owner: string;
  /** The lease end the round saw: the renewal is made only while it is still this one. */
  seen: number;
  until: number;
}

/** Locks the rows of these records (those that exist) in the one order every writer uses. */
async function lockRows(client: pg.ClientBase, refs: readonly DeliveryRef[]): Promise<void> {
  await client.query(SQL.lockRows, [refs.map((r) => pgText(r.eventId)), refs.map((r) => pgText(r.destinationId))]);
}

/** The columns of `COLUMNS` per record, as arrays for `unnest`. */
function columnsOf(records: readonly DeliveryRecord[]): unknown[] {
  return [
    records.map((r) => pgText(r.eventId)),
    records.map((r) => pgText(r.destinationId)),
    records.map((r) => r.seq),
    records.map((r) => r.state),
    records.map((r) => r.receivedAt),
    records.map((r) => r.updatedAt),
    records.map((r) => JSON.stringify(r)),
    records.map((r) => pgText(r.subject)),
    records.map((r) => r.nextAttemptAt),
  ];
}

const pairKey = (destinationId: string, subject: string) => `${destinationId}\u0000${subject}`;

/** The stored routing cursor as a routing transaction sees it (moved by its writes). */
interface SeenCursor {
  value: number;
}

interface QueuedWrite {
  work?: (client: pg.PoolClient, seen: SeenCursor) => Promise<unknown>;
  /** The same write as one statement in a transaction of its own: used when it is alone in its flush. */
  alone?: () => Promise<unknown>;
  /** Creates records and moves the routing cursor. */
  routes?: boolean;
  /**
   * Records to save (instead of `work`): every save of a transaction goes into one statement
   * per 500 records (the last save of a record wins, as in call order), not one per call.
   */
  saves?: readonly DeliveryRecord[];
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Opens the pool (creating the schema when missing) and a small one for lease renewals, and
 * returns the shared outbox.
 */
export const postgresOutbox: OutboxFactory<PostgresOutboxOptions> = async (options) =>
  createPostgresOutbox(await openSchemaPool(options), createPool({ ...options, poolSize: LEASE_POOL_SIZE }));

/**
 * The outbox on an opened pool whose schema exists. Renewals run on `leasePool` (default: the
 * same pool): on a pool of their own they never queue behind claims, writes and reads under
 * load, where a lease could end before its holder's renewal got a connection.
 */
export function createPostgresOutbox(pool: pg.Pool, leasePool: pg.Pool = pool): OutboxStore {
  const name = "postgres";

  const read = async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => {
    try {
      return await pool.query<R>(sql, params);
    } catch (error) {
      throw unavailable(`${name} outbox`, error);
    }
  };

  /**
   * A group-committed write queue: the writes made while its transaction is in flight go, in
   * call order, into the next one. Two queues: routing (records created with the cursor) and
   * record updates, so that updates never wait behind other instances' routing.
   */
  const writeQueue = () => {
    let queue: QueuedWrite[] = [];
    let flushing: Promise<void> | undefined;
    const flush = async () => {
      while (queue.length > 0) {
        // At most TRANSACTION_RECORDS records per transaction (always at least one write): under
        // a backlog the queue grows while a commit is slow, and one transaction holding every
        // queued row would hold them (against renewals and claims) for as long as it grows.
        let size = 0;
        let take = 0;
        while (take < queue.length && (take === 0 || size < TRANSACTION_RECORDS)) {
          size += (queue[take] as QueuedWrite).saves?.length ?? 1;
          take++;
        }
        const batch = queue.slice(0, take);
        queue = queue.slice(take);
        const only = batch.length === 1 ? batch[0] : undefined;
        if (only?.alone) {
          try {
            only.resolve(await only.alone());
          } catch (error) {
            only.reject(error instanceof RoutingCursorBehindError ? error : unavailable(`${name} outbox`, error));
          }
          continue;
        }
        try {
          // Every instance routes the same events: routing transactions take the cursor row
          // first, so they queue in one order instead of deadlocking on each other's inserts
          // (sent with the BEGIN: one round trip for both).
          const routes = batch.some((item) => item.routes);
          const results = await inTransaction(
            pool,
            async (client, opened) => {
              // A routing transaction opened with the cursor row locked: the stored cursor.
              const seen: SeenCursor = { value: routes ? Number(opened.rows[0]?.value ?? 0) : 0 };
              // The rows it rewrites are locked up front in one global order (as renewals lock
              // theirs), so writers of overlapping rows queue instead of deadlocking.
              const rows = batch.flatMap((item) => item.saves ?? []);
              if (rows.length > 0) await lockRows(client, rows);
              const out: unknown[] = [];
              // Under load a transaction gathers dozens of saves: one statement for all of them
              // keeps its round trips (and the time it holds its rows) from growing with them.
              const merged = new Map<string, DeliveryRecord>();
              for (const item of batch) {
                if (item.saves) for (const r of item.saves) merged.set(pairKey(r.eventId, r.destinationId), r);
                out.push(item.work ? await item.work(client, seen) : undefined);
              }
              if (merged.size > 0) {
                const unique = [...merged.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, r]) => r);
                for (let i = 0; i < unique.length; i += WRITE_BATCH) {
                  await client.query(SQL.save, columnsOf(unique.slice(i, i + WRITE_BATCH)));
                }
                await freeSubjects(client, unique);
              }
              return out;
            },
            // Routing writes commit asynchronously: see `ROUTING_BEGIN`.
            routes ? ROUTING_BEGIN : "BEGIN",
          );
          for (const [i, item] of batch.entries()) item.resolve(results[i]);
        } catch (error) {
          const failure = error instanceof RoutingCursorBehindError ? error : unavailable(`${name} outbox`, error);
          for (const item of batch) item.reject(failure);
        }
      }
      flushing = undefined;
    };
    return {
      /** Queues a write; resolves with its result once its transaction committed. */
      write<T>(
        work: (client: pg.PoolClient, seen: SeenCursor) => Promise<T>,
        routes = false,
        alone?: () => Promise<T>,
      ) {
        return new Promise<T>((resolve, reject) => {
          queue.push({ work, routes, alone, resolve: resolve as (value: unknown) => void, reject });
          flushing ??= flush();
        });
      },
      /** Queues a save of these records; resolves once its transaction committed. */
      save(records: readonly DeliveryRecord[]) {
        return new Promise<void>((resolve, reject) => {
          queue.push({ saves: records, resolve: resolve as (value: unknown) => void, reject });
          flushing ??= flush();
        });
      },
      idle: () => flushing,
    };
  };
  const routing = writeQueue();
  const updates = writeQueue();

  /**
   * Records whose save is queued or in flight, by key (count of saves). A lane lets go of a
   * record once its outcome is queued, before the write commits; until then the row still says
   * "delivering" under this instance's lease. Renewals cover these rows too, so a slow commit
   * under load cannot let the lease end and another instance deliver the record again.
   */
  const unsaved = new Map<string, { ref: DeliveryRef; n: number }>();
  const markUnsaved = (records: readonly DeliveryRecord[]) => {
    for (const r of records) {
      const key = pairKey(r.eventId, r.destinationId);
      const entry = unsaved.get(key);
      if (entry) entry.n++;
      else unsaved.set(key, { ref: { eventId: r.eventId, destinationId: r.destinationId }, n: 1 });
    }
  };
  const markSaved = (records: readonly DeliveryRecord[]) => {
    for (const r of records) {
      const key = pairKey(r.eventId, r.destinationId);
      const entry = unsaved.get(key);
      if (entry && --entry.n === 0) unsaved.delete(key);
    }
  };

  /**
   * Renewals a round could not make because another transaction held the row (most often a
   * write of this instance: under load one can hold its rows for seconds), by key. Skipping such
   * a row until the next round could let its lease end while its holder was alive and working on
   * it; another instance then delivered the record again. `renewSkipped` makes them as soon as
   * the row is free (one such transaction at a time), if the lease is still the one the round
   * saw: a release, a later renewal, a finished or taken-over record is never undone.
   */
  const skipped = new Map<string, SkippedRenewal>();
  let renewingSkipped: Promise<void> | undefined;
  const renewSkipped = async () => {
    for (let round = 0; round < 1_000 && skipped.size > 0; round++) {
      const batch = [...skipped.values()];
      skipped.clear();
      const byOwner = new Map<string, SkippedRenewal[]>();
      for (const entry of batch) byOwner.set(entry.owner, [...(byOwner.get(entry.owner) ?? []), entry]);
      for (const [owner, entries] of byOwner) {
        try {
          const renewed = await inTransaction(leasePool, async (client) => {
            await client.query(`SET LOCAL lock_timeout = ${LOCKED_RENEWAL_WAIT_MS}`);
            const locked = await client.query<{ event_id: string; destination_id: string }>(SQL.lockLocked, [
              entries.map((e) => e.eventId),
              entries.map((e) => e.destinationId),
              entries.map((e) => e.seen),
              owner,
            ]);
            const keys = new Set(locked.rows.map((r) => pairKey(r.event_id, r.destination_id)));
            const chosen = entries.filter((e) => keys.has(pairKey(e.eventId, e.destinationId)));
            if (chosen.length === 0) return [];
            const { rows } = await client.query<{ destination_id: string; subject: string | null; until: number }>(
              SQL.renewLocked,
              [chosen.map((e) => e.eventId), chosen.map((e) => e.destinationId), chosen.map((e) => e.until)],
            );
            return rows;
          });
          // Their subjects' ownership after the commit: no row of `deliveries` stays locked
          // while this waits for a subject's row.
          const subjects = new Map<string, { destinationId: string; subject: string; until: number }>();
          for (const r of renewed) {
            if (r.subject === null) continue;
            const key = pairKey(r.destination_id, r.subject);
            const until = Math.max(Number(r.until), subjects.get(key)?.until ?? Number.NEGATIVE_INFINITY);
            subjects.set(key, { destinationId: r.destination_id, subject: r.subject, until });
          }
          if (subjects.size > 0) {
            const list = [...subjects.values()];
            await leasePool.query(SQL.renewOwnersEach, [
              list.map((x) => x.destinationId),
              list.map((x) => x.subject),
              list.map((x) => x.until),
              owner,
            ]);
          }
        } catch {
          // A lock wait that ran out, or the server gone: a row still held is skipped, and
          // queued here again, by the next renewal round.
        }
      }
    }
    renewingSkipped = undefined;
  };

  /** Folds the counters' change rows into their totals, unless another instance is doing it. */
  const foldCounts = async () => {
    try {
      await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ locked: boolean }>(
          "SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.delivery_counts')) AS locked",
        );
        if (rows[0]?.locked) await client.query(SQL.foldCounts);
      });
    } catch (error) {
      throw unavailable(`${name} outbox`, error);
    }
  };

  /** Frees the subjects of finished records that have nothing unfinished left. */
  const freeSubjects = async (client: pg.PoolClient, records: readonly DeliveryRecord[]) => {
    const done = records.filter((r) => r.subject !== undefined && isTerminal(r.state));
    if (done.length === 0) return;
    await client.query(SQL.freeSubjects, [
      done.map((r) => pgText(r.destinationId)),
      done.map((r) => pgText(r.subject as string)),
    ]);
  };

  /** Creates records and moves the cursor in the routing queue; `withStates`: reads the destination states too. */
  const createDeliveries = (
    records: readonly DeliveryRecord[],
    cursor: number,
    lease: CreationLease | undefined,
    withStates: boolean,
    expected: number | undefined,
  ) => {
    const leaseColumns = (batch: readonly DeliveryRecord[]) => {
      const leased = batch.map((r) => lease !== undefined && leasedAtCreation(r, lease));
      return [
        leased.map((on) => (on ? (lease as CreationLease).until : 0)),
        leased.map((on) => (on ? (lease as CreationLease).owner : null)),
      ];
    };
    /** The records `inserted` names (event, destination keys), as copies, in call order. */
    const createdOf = (inserted: Set<string>) => {
      const out: DeliveryRecord[] = [];
      for (const r of records) {
        const key = pairKey(pgText(r.eventId), pgText(r.destinationId));
        if (!inserted.delete(key)) continue;
        out.push(structuredClone(r));
      }
      return out;
    };
    const statesOf = (list: string[] | null | undefined) =>
      (list ?? []).map((record) => JSON.parse(record) as DestinationState);
    // Up to WRITE_BATCH records: one statement, one round trip (when no other write shares the flush).
    const alone =
      records.length <= WRITE_BATCH
        ? async () => {
            let answer: pg.QueryResult<{
              before: string | number;
              inserted: [string, string][];
              states: string[] | null;
            }>;
            try {
              answer = await pool.query(SQL.routeInOne, [
                ...columnsOf(records),
                ...leaseColumns(records),
                cursor,
                withStates,
                expected ?? 0,
              ]);
            } catch (error) {
              throw unavailable(`${name} outbox`, error);
            }
            const row = answer.rows[0];
            const before = Number(row?.before ?? 0);
            if (expected !== undefined && before < expected) throw new RoutingCursorBehindError(before, expected);
            const inserted = new Set((row?.inserted ?? []).map(([e, d]) => pairKey(e, d)));
            return { created: createdOf(inserted), states: statesOf(row?.states) };
          }
        : undefined;
    return routing.write(
      async (client, seen) => {
        // Routing writes acknowledged before were lost (a crash took their asynchronous commit):
        // nothing is written, the caller routes again from the stored cursor.
        if (expected !== undefined && seen.value < expected) throw new RoutingCursorBehindError(seen.value, expected);
        const inserted = new Set<string>();
        // Every batch but the last on its own; the last with the cursor move (and the states).
        const lastStart = records.length === 0 ? 0 : Math.floor((records.length - 1) / WRITE_BATCH) * WRITE_BATCH;
        for (let i = 0; i < lastStart; i += WRITE_BATCH) {
          const batch = records.slice(i, i + WRITE_BATCH);
          const { rows } = await client.query<{ event_id: string; destination_id: string }>(SQL.create, [
            ...columnsOf(batch),
            ...leaseColumns(batch),
          ]);
          for (const row of rows) inserted.add(pairKey(row.event_id, row.destination_id));
        }
        const batch = records.slice(lastStart);
        const { rows } = await client.query<{
          inserted: [string, string][];
          moved: string | number | null;
          states: string[] | null;
        }>(SQL.createMovingCursor, [...columnsOf(batch), ...leaseColumns(batch), cursor, withStates]);
        const row = rows[0];
        if (row?.moved != null) seen.value = Number(row.moved);
        for (const [eventId, destinationId] of row?.inserted ?? []) inserted.add(pairKey(eventId, destinationId));
        return { created: createdOf(inserted), states: statesOf(row?.states) };
      },
      true,
      alone,
    );
  };

  return {
    name,
    shared: true,
    async readCursor() {
      const { rows } = await read<{ value: number }>(SQL.readCursor);
      return Number(rows[0]?.value ?? 0);
    },
    createDeliveries(records, cursor, lease, expected) {
      return createDeliveries(records, cursor, lease, false, expected).then((done) => done.created);
    },
    createDeliveriesWithStates(records, cursor, lease, expected) {
      return createDeliveries(records, cursor, lease, true, expected);
    },
    async saveDeliveries(records) {
      if (records.length === 0) return;
      // One row per key in a statement: the last save of a record wins, as in call order.
      const last = new Map<string, DeliveryRecord>();
      for (const r of records) last.set(pairKey(r.eventId, r.destinationId), r);
      // Rows locked in one order by every instance: concurrent saves cannot deadlock.
      const unique = [...last.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, r]) => r);
      markUnsaved(unique);
      try {
        await updates.save(unique);
      } finally {
        markSaved(unique);
      }
    },
    async getDelivery(eventId, destinationId) {
      const { rows } = await read<{ record: string }>(SQL.get, [pgText(eventId), pgText(destinationId)]);
      return rows[0] ? deliveryFromRow(rows[0]) : undefined;
    },
    async listByEvent(eventId) {
      const { rows } = await read<{ record: string }>(SQL.byEvent, [pgText(eventId)]);
      return rows.map(deliveryFromRow);
    },
    async listDeliveries(query) {
      const { sql, params } = buildDeliveryListQuery({ ...query, destinationId: pgText(query.destinationId) });
      const { rows } = await read<{ seq: number; record: string }>(toPg(sql), params);
      const deliveries = rows.slice(0, query.limit).map(deliveryFromRow);
      return {
        deliveries,
        next: rows.length > query.limit ? (deliveries[deliveries.length - 1] as DeliveryRecord).seq : null,
      };
    },
    async listActive() {
      const { rows } = await read<{ record: string }>(SQL.active);
      return rows.map(deliveryFromRow);
    },
    async countByState() {
      await foldCounts();
      const { rows } = await read<{ destination_id: string; state: DeliveryState; n: number }>(SQL.counts);
      const out: Record<string, Partial<Record<DeliveryState, number>>> = {};
      for (const row of rows) {
        const perState = out[row.destination_id] ?? {};
        out[row.destination_id] = perState;
        perState[row.state] = Number(row.n);
      }
      return out;
    },
    async listDestinationStates() {
      const { rows } = await read<{ record: string }>(SQL.destinationStates);
      return rows.map((row) => JSON.parse(row.record));
    },
    async saveDestinationState(state) {
      await updates.write((client) =>
        client.query(SQL.saveDestinationState, [pgText(state.id), JSON.stringify(state)]),
      );
    },
    async purge(before) {
      let removed = 0;
      for (let round = 0; round < 100_000; round++) {
        const n = (await read(SQL.purge, [before, PURGE_BATCH])).rowCount ?? 0;
        removed += n;
        if (n < PURGE_BATCH) break;
      }
      await foldCounts();
      return removed;
    },
    async claimDue(owner, now, leaseMs, limit, ordered = []) {
      if (limit <= 0) return [];
      const until = now + leaseMs;
      const orderedSet = new Set(ordered);
      try {
        return await inTransaction(pool, async (client) => {
          // More rows than asked: some may wait behind their subject's head or owner.
          const scan = orderedSet.size === 0 ? limit : Math.min(limit * 4 + 64, 5_000);
          const { rows } = await client.query<{
            event_id: string;
            destination_id: string;
            seq: number;
            subject: string | null;
            record: string;
          }>(SQL.due, [now, scan]);
          const gated = rows.filter((r) => r.subject !== null && orderedSet.has(r.destination_id));
          const pairs = [...new Map(gated.map((r) => [pairKey(r.destination_id, r.subject as string), r])).values()];
          const owners = new Map<string, { owner: string; until: number }>();
          const heads = new Map<string, number>();
          // Per pair, the seqs (ascending) of its unfinished records not leased to this owner.
          const blockers = new Map<string, number[]>();
          if (pairs.length > 0) {
            const upto = new Map<string, number>();
            for (const r of gated) {
              const key = pairKey(r.destination_id, r.subject as string);
              upto.set(key, Math.max(upto.get(key) ?? 0, Number(r.seq)));
            }
            const args = [pairs.map((r) => r.destination_id), pairs.map((r) => r.subject as string)];
            for (const o of (
              await client.query<{ destination_id: string; subject: string; owner: string; until: number }>(
                SQL.owners,
                args,
              )
            ).rows) {
              owners.set(pairKey(o.destination_id, o.subject), { owner: o.owner, until: Number(o.until) });
            }
            for (const h of (
              await client.query<{ destination_id: string; subject: string; head: number | null }>(SQL.heads, args)
            ).rows) {
              if (h.head !== null) heads.set(pairKey(h.destination_id, h.subject), Number(h.head));
            }
            const limits = pairs.map((r) => upto.get(pairKey(r.destination_id, r.subject as string)) ?? 0);
            for (const b of (
              await client.query<{ destination_id: string; subject: string; seq: number }>(SQL.blockers, [
                ...args,
                limits,
                owner,
                now,
              ])
            ).rows) {
              const key = pairKey(b.destination_id, b.subject);
              const list = blockers.get(key) ?? [];
              list.push(Number(b.seq));
              blockers.set(key, list);
            }
          }
          const takenSeqs = new Set<string>();
          /** Whether every unfinished record of the pair below `seq` not leased to us is taken now. */
          const inOrder = (key: string, seq: number) => {
            for (const s of blockers.get(key) ?? []) {
              if (s >= seq) return true;
              if (!takenSeqs.has(`${key}\u0000${s}`)) return false;
            }
            return true;
          };
          const taken: typeof rows = [];
          const acquired = new Set<string>();
          const pending = [...rows];
          // More passes while they take something: taking a subject's head (or the record before
          // another) makes its later records (seen earlier in due order) takeable too (bounded).
          for (let pass = 0; pass < 8 && taken.length < limit && pending.length > 0; pass++) {
            const skipped: typeof rows = [];
            for (const row of pending) {
              if (taken.length === limit) break;
              if (row.subject !== null && orderedSet.has(row.destination_id)) {
                const key = pairKey(row.destination_id, row.subject);
                const holder = owners.get(key);
                const live = holder !== undefined && holder.until > now;
                const mine = acquired.has(key) || (live && holder.owner === owner);
                if (!mine && (live || heads.get(key) !== Number(row.seq))) {
                  skipped.push(row);
                  continue;
                }
                // Never past an older unfinished record that this claim does not take: it may
                // only be locked by another transaction at this moment (skipped by the scan).
                if (!inOrder(key, Number(row.seq))) {
                  skipped.push(row);
                  continue;
                }
                acquired.add(key);
                takenSeqs.add(`${key}\u0000${Number(row.seq)}`);
              }
              taken.push(row);
            }
            const progressed = skipped.length < pending.length;
            pending.splice(0, pending.length, ...skipped);
            if (!progressed) break;
          }
          if (taken.length === 0) return [];
          await client.query(SQL.lease, [
            taken.map((r) => r.event_id),
            taken.map((r) => r.destination_id),
            until,
            owner,
          ]);
          if (acquired.size > 0) {
            const keys = [...acquired].map((k) => k.split("\u0000") as [string, string]);
            await client.query(SQL.own, [keys.map((k) => k[0]), keys.map((k) => k[1]), owner, until]);
          }
          return taken.map((r) => deliveryFromRow(r));
        });
      } catch (error) {
        throw unavailable(`${name} outbox`, error);
      }
    },
    async renewLeases(owner, refs, until) {
      // With the records whose save has not committed yet (see `unsaved`); a release (`until`
      // in the past, at stop) leaves them alone: their write is about to finish them.
      const asked = new Set(refs.map((r) => pairKey(r.eventId, r.destinationId)));
      const extra = [...unsaved.entries()].filter(([key]) => !asked.has(key)).map(([, e]) => e.ref);
      const all = until > Date.now() ? [...refs, ...extra] : refs;
      if (all.length === 0) return [];
      try {
        const lost = await inTransaction(leasePool, async (client) => {
          const ids = [all.map((r) => pgText(r.eventId)), all.map((r) => pgText(r.destinationId))];
          const { rows } = await client.query<{ event_id: string; destination_id: string; subject: string | null }>(
            SQL.renew,
            [...ids, until, owner],
          );
          const held = new Set(rows.map((r) => pairKey(r.event_id, r.destination_id)));
          if (held.size < all.length) {
            // Skipped (another transaction holds the row) is not lost while it is still this
            // owner's: it is renewed once the row is free (`renewSkipped`).
            const owned = await client.query<{ event_id: string; destination_id: string; lease_until: number }>(
              SQL.owned,
              [...ids, owner],
            );
            for (const r of owned.rows) {
              const key = pairKey(r.event_id, r.destination_id);
              if (held.has(key)) continue;
              held.add(key);
              skipped.set(key, {
                eventId: r.event_id,
                destinationId: r.destination_id,
                owner,
                seen: Number(r.lease_until),
                until,
              });
            }
          }
          const subjects = rows.filter((r) => r.subject !== null);
          if (subjects.length > 0) {
            await client.query(SQL.renewOwners, [
              subjects.map((r) => r.destination_id),
              subjects.map((r) => r.subject),
              until,
              owner,
            ]);
          }
          return refs.filter((r) => !held.has(pairKey(pgText(r.eventId), pgText(r.destinationId))));
        });
        // Resolved once the skipped rows are renewed too (or their wait ran out).
        if (skipped.size > 0) renewingSkipped ??= renewSkipped();
        await renewingSkipped;
        return lost;
      } catch (error) {
        throw unavailable(`${name} outbox`, error);
      }
    },
    async close() {
      await Promise.all([routing.idle(), updates.idle()]);
      await renewingSkipped;
      await pool.end();
      if (leasePool !== pool) await leasePool.end();
    },
  };
}
