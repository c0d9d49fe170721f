/**
 * Every better-sqlite3 statement and connection of this thread stays reachable until the thread
 * ends: none is ever garbage collected. On Node 24, better-sqlite3 12's objects derive from
 * `node::ObjectWrap`, whose destructor removes an environment cleanup hook and asserts that a
 * Node environment is current (`Assertion failed: (env) != nullptr` in
 * `node::RemoveEnvironmentCleanupHook` from `Statement::~Statement()`). A garbage collection that
 * V8 finishes from a platform task runs with no environment current, so collecting a statement
 * (one made by `db.pragma()` or an unkept `db.prepare()`) could abort the process, often right at
 * start. better-sqlite3 13 (Node-API) does not have this, but needs Node 22.
 *
 * So the sqlite driver prepares through `statementOn` (one statement per connection and SQL
 * text, kept) and runs pragmas through `pragmaOn`. The number kept is bounded by the distinct SQL
 * texts: the fixed statements plus one per content-filter shape used in queries (values are
 * parameters). The writer thread (plain JavaScript) keeps its own the same way. At the thread's
 * end Node's own cleanup hooks free them with the environment still current.
 */
import type Database from "better-sqlite3";

type Statement = Database.Statement;

/** Connections of this thread (never dropped) and their statements by SQL text. */
const kept = new Map<Database.Database, Map<string, Statement>>();

/** Keeps `db` (and so its statements) reachable for the rest of the thread's life. */
export function retainConnection(db: Database.Database): Database.Database {
  if (!kept.has(db)) kept.set(db, new Map());
  return db;
}

/** The statement of `sql` on `db`, prepared once and kept. */
export function statementOn(db: Database.Database, sql: string): Statement {
  let statements = kept.get(db);
  if (!statements) {
    statements = new Map();
    kept.set(db, statements);
  }
  let statement = statements.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

/** `db.pragma(source)` on a kept statement: the rows of a reading pragma, else none. */
export function pragmaOn(db: Database.Database, source: string): unknown[] {
  const statement = statementOn(db, `PRAGMA ${source}`);
  if (statement.reader) return statement.all();
  statement.run();
  return [];
}
