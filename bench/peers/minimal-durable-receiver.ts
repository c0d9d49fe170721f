/**
 * The limit row of the ingress benchmark: the least a receiver can do and still say "durable
 * before 2xx". Bare `node:http`, both upstream signature schemes verified with
 * `timingSafeEqual`, the body parsed as JSON, one row per event inserted (dedupe by the primary
 * key) into SQLite in WAL mode with group commit: every request read in one turn of the event
 * loop shares one transaction and one fdatasync of the WAL, and only then is answered 202.
 * Nothing else: no normalization, no schema checks, no indexes, no logs, no metrics.
 * Its own process; prints `PORT <n>`. Env: PEER_ESIGN_SECRET, PEER_STAFFING_SECRET, PEER_DIR.
 */
import { open } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { verifyEsign, verifyStaffing } from "./peer-signatures.ts";

const dir = process.env.PEER_DIR ?? ".";

const db = new Database(join(dir, "minimal.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec("CREATE TABLE IF NOT EXISTS events (key TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID");
const wal = await open(join(dir, "minimal.db-wal"), "r+");
const insert = db.prepare("INSERT INTO events (key, body) VALUES (?, ?) ON CONFLICT DO NOTHING");

interface Pending {
  key: string;
  body: string;
  done(inserted: boolean | undefined): void;
}
let queue: Pending[] = [];
let scheduled = false;
let syncing = false;
let committed: { pending: Pending; inserted: boolean }[] = [];

const commitAll = db.transaction((batch: Pending[]) =>
  batch.map((pending) => ({ pending, inserted: insert.run(pending.key, pending.body).changes === 1 })),
);

async function syncLoop() {
  syncing = true;
  while (committed.length > 0) {
    const batch = committed;
    committed = [];
    try {
      await wal.datasync();
      for (const { pending, inserted } of batch) pending.done(inserted);
    } catch {
      for (const { pending } of batch) pending.done(undefined);
    }
  }
  syncing = false;
}

function flush() {
  scheduled = false;
  const batch = queue;
  queue = [];
  try {
    committed.push(...commitAll(batch));
  } catch {
    for (const pending of batch) pending.done(undefined);
    return;
  }
  if (!syncing) void syncLoop();
}

function record(key: string, body: string, done: Pending["done"]) {
  queue.push({ key, body, done });
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const source = req.url?.slice("/webhooks/".length);
    const header = req.headers["x-svc-signature"] as string | undefined;
    const ok = source === "esign" ? verifyEsign(body, header) : source === "staffing" && verifyStaffing(body, header);
    if (!ok) return void res.writeHead(401).end();
    const text = body.toString("utf8");
    let parsed: { event_id?: string };
    try {
      parsed = JSON.parse(text);
    } catch {
      return void res.writeHead(400).end();
    }
    const identity = source === "esign" ? parsed.event_id : (req.headers["x-svc-delivery-id"] as string | undefined);
    if (!identity) return void res.writeHead(400).end();
    record(`${source}:${identity}`, text, (inserted) => {
      if (inserted === undefined) return void res.writeHead(503).end();
      res.writeHead(inserted ? 202 : 200, { "content-type": "application/json" });
      res.end(`{"id":${JSON.stringify(identity)},"duplicate":${!inserted}}`);
    });
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`PORT ${address.port}`);
});
process.on("SIGTERM", () =>
  server.close(() => {
    db.close();
    process.exit(0);
  }),
);
