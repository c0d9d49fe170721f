/**
 * The plans of the `postgres` store's ingress statements. They run as generic plans, made once
 * per connection (the appends force it, the claim pool forces it, PostgreSQL picks one for the
 * others after five runs), often while the tables are still small: such a plan must still probe
 * `events` and `marks` through their keys, never read a table whole, or every webhook pays for
 * the size of the log (an append once seq-scanned `events` at every group commit).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toPg } from "../../adapters/store/postgres/pg-connection.ts";
import { buildPgReadAfterQuery } from "../../adapters/store/postgres/pg-event-queries.ts";
import { ensureSchema } from "../../adapters/store/postgres/pg-schema.ts";
import { appendStatement, CLAIM_SQL } from "../../adapters/store/postgres/postgres-store.ts";
import { type PostgresServer, startPostgresServer } from "../helpers/postgres-server.ts";

let server: PostgresServer;
let client: pg.Client;
const SCHEMA = "plans";

beforeAll(async () => {
  server = await startPostgresServer();
  client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await ensureSchema(client, SCHEMA);
  await client.query(`SET search_path = ${SCHEMA}`);
  await client.query("SET plan_cache_mode = force_generic_plan");
}, 120_000);
afterAll(async () => {
  await client?.end();
  await server?.stop();
});

/** The generic plan of `text` with `params` parameters, as EXPLAIN prints it. */
async function genericPlan(name: string, text: string, params: number): Promise<string> {
  await client.query(`PREPARE ${name} AS ${text}`);
  const nulls = Array.from({ length: params }, () => "NULL").join(", ");
  const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE ${name}(${nulls})`);
  await client.query(`DEALLOCATE ${name}`);
  return rows.map((row) => row["QUERY PLAN"]).join("\n");
}

describe("postgres store: generic plans of the ingress statements on young tables", () => {
  it("every append size class probes events_id_key and reads no table whole", async () => {
    for (let rows = 1; rows <= 256; rows *= 2) {
      const statement = appendStatement(rows);
      expect(statement.rows).toBe(rows);
      const plan = await genericPlan(`append_${rows}`, statement.text, 4 + 8 * rows);
      expect(plan, `append of ${rows}`).toContain("events_id_key");
      expect(plan, `append of ${rows}`).not.toMatch(/Seq Scan on (events|marks)\b/);
    }
  });

  it("the claim probes marks by its key and the unfiltered read after a cursor walks the seq key", async () => {
    const claim = await genericPlan("claim", CLAIM_SQL, 3);
    expect(claim).toContain("marks_pkey");
    expect(claim).not.toMatch(/Seq Scan on marks\b/);
    const readAfter = await genericPlan("read_after", toPg(buildPgReadAfterQuery(0, 1).sql), 2);
    expect(readAfter).toContain("events_pkey");
    expect(readAfter).not.toMatch(/Seq Scan on events\b/);
  });
});
