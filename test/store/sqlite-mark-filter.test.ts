/**
 * The sqlite store's filter of dedupe mark keys (adapters/store/sqlite/mark-filter.ts): once
 * filled from the marks on disk it never says "no" for a key that has a mark (on disk before,
 * or added since), says "maybe" for everything until it is filled, and says "no" for nearly
 * every other key (so claims of new identities skip the database read).
 */
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { createMarkFilter } from "../../adapters/store/sqlite/mark-filter.ts";
import { SCHEMA_STATEMENTS } from "../../src/store/sql/schema.ts";

it("never misses a mark on disk or added, is all 'maybe' until filled, and rules out other keys", async () => {
  const db = new Database(":memory:");
  for (const statement of SCHEMA_STATEMENTS) db.exec(statement);
  const insert = db.prepare("INSERT INTO marks (key, event_id, expires_at) VALUES (?, ?, ?)");
  // More than one fill chunk, with keys that sort in every order (and a NUL, as real keys carry).
  const onDisk = Array.from({ length: 2500 }, (_, i) => `src\u0000${(i * 7919) % 2500}-${"z".repeat(i % 5)}`);
  db.transaction(() => {
    for (const key of onDisk) insert.run(key, "evt", 1);
  })();

  const filter = createMarkFilter();
  expect(filter.mightHave("src\u0000never-recorded")).toBe(true);
  filter.add("src\u0000added-while-filling");
  const filling = filter.fill(db, () => false);
  // Marks written while the fill runs are added at append time.
  filter.add("src\u0000added-during-fill");
  await filling;

  for (const key of onDisk) expect(filter.mightHave(key)).toBe(true);
  expect(filter.mightHave("src\u0000added-while-filling")).toBe(true);
  expect(filter.mightHave("src\u0000added-during-fill")).toBe(true);
  const others = Array.from({ length: 10_000 }, (_, i) => `src\u0000other-${i}`);
  const maybes = others.filter((key) => filter.mightHave(key)).length;
  expect(maybes).toBeLessThan(10);
  db.close();
});
