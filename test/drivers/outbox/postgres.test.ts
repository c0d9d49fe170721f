/** The outbox conformance and lease suites against the `postgres` driver on a real PostgreSQL server. */
import { afterAll, beforeAll } from "vitest";
import { postgresOutbox } from "../../../adapters/outbox/postgres/postgres-outbox.ts";
import type { OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { type OutboxHarness, testOutboxDriver } from "../../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../../conformance/outbox-lease-conformance.ts";
import { type PostgresServer, startPostgresServer } from "../../helpers/postgres-server.ts";

let server: PostgresServer;
let n = 0;
const schemaOf = new WeakMap<OutboxStore, string>();

beforeAll(async () => {
  server = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

const open = async (schema: string) => {
  const outbox = await postgresOutbox({ url: server.url, schema, poolSize: 4 });
  schemaOf.set(outbox, schema);
  return outbox;
};
// A fresh schema per test keeps tests apart on one server.
const harness: OutboxHarness = {
  open: () => open(`o${++n}`),
  async reopen(outbox) {
    await outbox.close();
    return open(schemaOf.get(outbox) as string);
  },
};

testOutboxDriver("postgres", harness);
testOutboxLeases("postgres", harness);
