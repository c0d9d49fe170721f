/**
 * The PostgreSQL JSONB translation of a filter (adapters/store/postgres/filter-to-jsonb.ts)
 * selects exactly the events the in-memory predicate matches: the random documents and filters
 * of the SQLite property test, on a real PostgreSQL server with the `postgres` store's schema.
 */
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { translateFilterToJsonb } from "../../adapters/store/postgres/filter-to-jsonb.ts";
import { clientConfig, toPg } from "../../adapters/store/postgres/pg-connection.ts";
import { eventColumns } from "../../adapters/store/postgres/pg-event-queries.ts";
import { ensureSchema } from "../../adapters/store/postgres/pg-schema.ts";
import { createEventFilter } from "../../src/filters/event-filter.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { createEventSummarizer } from "../../src/store/match-event-query.ts";
import { type PostgresServer, startPostgresServer } from "../helpers/postgres-server.ts";
import { document, recordOf, rootNode } from "./filter-arbitraries.ts";

let server: PostgresServer;
let client: pg.Client;

beforeAll(async () => {
  server = await startPostgresServer();
  client = new pg.Client(clientConfig({ url: server.url, schema: "props" }));
  await client.connect();
  await ensureSchema(client, "props");
}, 120_000);
afterAll(async () => {
  await client?.end();
  await server?.stop();
});

/** Content filters only: no service, no external id. */
const summarizeEvent = createEventSummarizer(undefined);
let informative = 0;
let exactRuns = 0;
it("JSONB pushdown and the in-memory predicate select the same events", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(document, { minLength: 1, maxLength: 12 }), rootNode, async (docs, tree) => {
      const records = docs.map((d, i) => recordOf(d, i + 1));
      const columns = records.map((record) => eventColumns(record, summarizeEvent));
      await client.query("DELETE FROM events");
      await client.query(
        `INSERT INTO events (seq, id, source_id, type, received_at, record, doc)
          SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::jsonb[])`,
        [
          records.map((r) => r.seq),
          columns.map((c) => c.id),
          columns.map((c) => c.sourceId),
          columns.map((c) => c.type),
          columns.map((c) => c.receivedAt),
          columns.map((c) => c.record),
          columns.map((c) => c.doc),
        ],
      );
      const filter = createEventFilter(tree);
      const expected = records
        .map((r) => JSON.parse(JSON.stringify(r)) as EventRecord)
        .filter((r) => filter.matchesRecord(r))
        .map((r) => r.seq);
      const { sql, params, exact } = translateFilterToJsonb(tree);
      const { rows } = await client.query<{ seq: number }>(
        toPg(`SELECT seq FROM events WHERE ${sql} ORDER BY seq`),
        params,
      );
      const selected = rows.map((r) => Number(r.seq));
      if (exact) {
        exactRuns++;
        expect(selected).toEqual(expected);
      } else expect(selected).toEqual(expect.arrayContaining(expected));
      if (expected.length > 0 && expected.length < records.length) informative++;
    }),
    { numRuns: 300 },
  );
  expect(informative).toBeGreaterThan(12);
  expect(exactRuns).toBeGreaterThan(280);
}, 300_000);
