/**
 * The SQL translation of a filter selects exactly the events the in-memory predicate matches:
 * random documents (nested objects, arrays of scalars and of objects, every JSON type) and
 * random filters over them, on a real SQLite database with the store's own schema.
 */
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createEventFilter } from "../../src/filters/event-filter.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { EVENT_SQL, eventInsertParams } from "../../src/store/sql/event-sql.ts";
import { SCHEMA_STATEMENTS } from "../../src/store/sql/schema.ts";
import { document, recordOf, rootNode } from "./filter-arbitraries.ts";

let db: Database.Database;
beforeAll(() => {
  db = new Database(":memory:");
  for (const statement of SCHEMA_STATEMENTS) db.exec(statement);
});
afterAll(() => db.close());

let informative = 0;
let exactRuns = 0;
it("SQL pushdown and the in-memory predicate select the same events", () => {
  const insert = db.prepare(EVENT_SQL.insert);
  fc.assert(
    fc.property(fc.array(document, { minLength: 1, maxLength: 12 }), rootNode, (docs, tree) => {
      db.exec("DELETE FROM events");
      // Stored as the drivers store it (JSON text), read back as the drivers read it.
      const records = docs.map((d, i) => recordOf(d, i + 1));
      for (const r of records) insert.run(...eventInsertParams(r));
      const filter = createEventFilter(tree);
      const expected = records
        .map((r) => JSON.parse(JSON.stringify(r)) as EventRecord)
        .filter((r) => filter.matchesRecord(r))
        .map((r) => r.seq);
      const { sql, params, exact } = filter.sql;
      const rows = db.prepare(`SELECT seq FROM events WHERE ${sql} ORDER BY seq`).all(...params) as { seq: number }[];
      const selected = rows.map((r) => r.seq);
      // Inexact only past the size bounds (a superset, finished in memory); exact otherwise.
      if (exact) {
        exactRuns++;
        expect(selected).toEqual(expected);
      } else expect(selected).toEqual(expect.arrayContaining(expected));
      if (expected.length > 0 && expected.length < records.length) informative++;
    }),
    { numRuns: 1500 },
  );
  // The filters discriminate: a good share of runs select some events and not others.
  expect(informative).toBeGreaterThan(60);
  expect(exactRuns).toBeGreaterThan(1400);
});
