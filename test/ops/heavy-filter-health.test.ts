/**
 * Work over the event log is sliced (docs/filters.md#replay), against a real gateway process on
 * its SQLite store holding 100,000 events (written straight into its database between two runs,
 * the fast way to seed). While a client's heavy dry-run replay (`$not` of an `$in` of 100 strings:
 * too many parameters for SQL, so evaluated in the gateway) counts them, `/healthz` keeps
 * answering: every probe is timed and the slowest is bounded with a wide margin (the target,
 * 250 ms, is for a quiet machine; this suite shares two cores). A non-dry replay past the
 * 10,000 cap is refused.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, test } from "vitest";
import type { EventRecord } from "../../src/store/contract.ts";
import { EVENT_SQL, eventInsertParams } from "../../src/store/sql/event-sql.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

const EVENTS = 100_000;
const CLIENT_KEY = `client_${randomBytes(16).toString("hex")}`;
const running: GatewayProcess[] = [];
afterAll(async () => {
  for (const gw of running) await gw.kill();
});

/** Writes `count` e-sign events straight into the store's database (the gateway is stopped). */
function seed(dataDir: string, count: number): void {
  const db = new Database(join(dataDir, "gateway.db"));
  try {
    const insert = db.prepare(EVENT_SQL.insert);
    const now = Date.now();
    db.transaction(() => {
      for (let seq = 1; seq <= count; seq++) {
        const id = `evt_seed${String(seq).padStart(20, "0")}`;
        const receivedAt = now - (count - seq);
        const time = new Date(receivedAt).toISOString();
        const record = {
          id,
          seq,
          sourceId: "esign",
          identity: `seed-${seq}`,
          receivedAt,
          event: {
            specversion: "1.0",
            id,
            source: "/webhooks/esign",
            type: "agreement.completed",
            subject: `agreements/agr_${seq % 1000}`,
            time,
            datacontenttype: "application/json",
            data: { agreement_id: `agr_${seq % 1000}`, status: `status-${seq % 250}`, amount: seq },
            service: "esign",
            upstreamid: `seed-${seq}`,
            upstreamidkind: "event_id",
            receivedtime: time,
          },
          rawBody: "{}",
          rawBodyEncoding: "utf8",
          headers: {},
          marks: [],
        } as unknown as EventRecord;
        insert.run(...eventInsertParams(record, undefined));
      }
    })();
  } finally {
    db.close();
  }
}

test("a heavy filter over 100,000 events never holds /healthz; a replay past its cap is refused", async () => {
  const secrets = makeSecrets();
  const dataDir = await mkdtemp(join(tmpdir(), "gw-heavy-filter-"));
  const config = {
    ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
    store: { driver: "sqlite", dir: dataDir },
    clients: [{ id: "console", apiKeyHashes: [adminKeyHash(CLIENT_KEY)], scopes: { events: true } }],
    destinations: [
      {
        id: "hook",
        type: "http",
        url: "http://127.0.0.1:9/hook",
        secrets: ["${TEST_WHSEC}"],
        allowCidrs: ["127.0.0.1/32"],
      },
    ],
    routes: [{ destinations: ["hook"] }],
  };
  const env = { TEST_WHSEC: `whsec_${randomBytes(24).toString("base64")}` };
  // A first run creates the database; the events are written while no gateway holds it.
  const first = await startGatewayProcess({ config, secrets, dataDir, env });
  await first.kill();
  seed(dataDir, EVENTS);
  const gw = await startGatewayProcess({ config, secrets, dataDir, env });
  running.push(gw);

  const statuses = Array.from({ length: 100 }, (_, i) => `status-${i}`);
  const replay = (body: unknown) =>
    fetch(`${gw.url}/events/replay`, {
      method: "POST",
      headers: { authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  // Only the seeded events: the gateway's own events (a failing destination's, say) are not counted.
  const heavy = { filter: { type: "agreement.completed", $not: { data: { status: { $in: statuses } } } } };

  let done = false;
  const started = performance.now();
  const counting = replay({ ...heavy, dryRun: true }).then(async (answer) => {
    done = true;
    return { status: answer.status, body: (await answer.json()) as { matched: number } };
  });
  const waits: number[] = [];
  // Bounded: at most 10,000 probes, one after the other, until the dry run answers.
  for (let i = 0; i < 10_000 && !done; i++) {
    const t = performance.now();
    const health = await fetch(`${gw.url}/healthz`);
    await health.arrayBuffer();
    waits.push(performance.now() - t);
    expect(health.status).toBe(200);
  }
  const counted = await counting;
  const took = performance.now() - started;
  expect(counted.status).toBe(200);
  // status-0 .. status-99 are 100 of 250 values: 150 of every 250 events match.
  expect(counted.body.matched).toBe((EVENTS * 150) / 250);
  const slowest = Math.max(...waits);
  console.log(
    `dry run over ${EVENTS} events took ${Math.round(took)} ms; ${waits.length} /healthz probes, slowest ${Math.round(slowest)} ms`,
  );
  expect(waits.length).toBeGreaterThan(1);
  // Unsliced, the first probe waited for the whole count (seconds); sliced, a probe waits for
  // a slice or two. Wide margin for a loaded 2-core machine.
  expect(slowest).toBeLessThan(Math.max(1000, took / 4));

  // A filter SQLite answers exactly runs one window of the log per statement, so one matching
  // nothing does not scan the whole log in one statement (list-matching.ts).
  const sqlStarted = performance.now();
  let sqlDone = false;
  const sqlCount = replay({ filter: { data: { status: "no-such-status" } }, dryRun: true }).then(async (answer) => {
    sqlDone = true;
    return (await answer.json()) as { matched: number };
  });
  const sqlWaits: number[] = [];
  for (let i = 0; i < 10_000 && !sqlDone; i++) {
    const t = performance.now();
    await (await fetch(`${gw.url}/healthz`)).arrayBuffer();
    sqlWaits.push(performance.now() - t);
  }
  expect((await sqlCount).matched).toBe(0);
  const sqlTook = performance.now() - sqlStarted;
  const sqlSlowest = Math.max(...sqlWaits);
  console.log(
    `SQL dry run matching none took ${Math.round(sqlTook)} ms; slowest /healthz ${Math.round(sqlSlowest)} ms`,
  );
  expect(sqlSlowest).toBeLessThan(Math.max(1000, sqlTook / 4));

  const refused = await replay(heavy);
  expect(refused.status).toBe(400);
  const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
  expect(error.code).toBe("invalid_request");
  expect(error.message).toMatch(/^more than 10000 events match/);
}, 300_000);
