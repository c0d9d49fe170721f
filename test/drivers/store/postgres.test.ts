/** The store conformance suite against the `postgres` driver on a real PostgreSQL server. */
import { afterAll, beforeAll } from "vitest";
import { postgresStore } from "../../../adapters/store/postgres/postgres-store.ts";
import { testStoreDriver } from "../../conformance/store-conformance.ts";
import { type PostgresServer, startPostgresServer } from "../../helpers/postgres-server.ts";

let server: PostgresServer;
let n = 0;

beforeAll(async () => {
  server = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

// A fresh schema per test keeps tests apart on one server.
testStoreDriver("postgres", ({ now, services }) =>
  postgresStore({ url: server.url, schema: `t${++n}`, now, poolSize: 4, services }),
);
