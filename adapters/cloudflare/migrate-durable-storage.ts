/**
 * The SQLite storage of a Durable Object (a store shard, a delivery object) as a versioned store:
 * the same SQL layout and migration steps as the Node sqlite store (src/store/sql/), under the
 * one policy of src/store/store-version.ts. Run when the object starts: storage from a newer
 * release is refused (`StoreVersionError`) before anything is written; otherwise the base layout
 * (idempotent), then each pending step in its own `transactionSync` with its version record.
 */
import { SCHEMA_STATEMENTS } from "../../src/store/sql/schema.ts";
import {
  applySqlStep,
  readSqlVersion,
  SQL_MIGRATION_STEPS,
  type SqlTarget,
} from "../../src/store/sql/sql-migrations.ts";
import { planFrom } from "../../src/store/store-version.ts";
import type { DurableObjectStorage } from "./cloudflare-types.ts";

/** Creates the layout of `storage` and migrates it to this release's store version. */
export function prepareDurableStorage(storage: DurableObjectStorage, name: string): void {
  const { sql } = storage;
  const target: SqlTarget = {
    run: (query, ...params) => void sql.exec(query, ...params),
    get: <Row>(query: string, ...params: (string | number | null)[]) =>
      sql.exec<Row & Record<string, unknown>>(query, ...params).toArray()[0] as Row | undefined,
    now: Date.now,
  };
  const plan = planFrom(name, readSqlVersion(target), SQL_MIGRATION_STEPS);
  for (const statement of SCHEMA_STATEMENTS) sql.exec(statement);
  for (const step of plan.pending) storage.transactionSync(() => applySqlStep(target, step));
}
