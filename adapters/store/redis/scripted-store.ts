/**
 * The store contract on Redis, written once against a `ScriptRunner` so that the TCP driver
 * (ioredis) and the REST driver (Upstash) behave identically. Data layout: redis-keys.ts;
 * atomic steps: store-scripts.ts. Event-log queries walk sorted-set indexes (per source, type,
 * subject and external id, by seq), never the whole keyspace.
 */
import type {
  AppendResult,
  ClaimResult,
  EventPage,
  EventQuery,
  EventRecord,
  StoreDriver,
  StoreWiring,
} from "../../../src/store/contract.ts";
import { StoreUnavailableError } from "../../../src/store/contract.ts";
import {
  compileEventQuery,
  compileTypePattern,
  createEventSummarizer,
  type SummarizeEvent,
} from "../../../src/store/match-event-query.ts";
import { createKeyLayout, type KeyLayout } from "./redis-keys.ts";
import type { ScriptReply, ScriptRunner } from "./script-runner.ts";
import {
  appendScript,
  claimScript,
  deleteScript,
  getScript,
  membersScript,
  purgeScript,
  readScript,
  redactScript,
  releaseScript,
  removeScript,
  scanScript,
  setIfAbsentScript,
  writeScript,
} from "./store-scripts.ts";

export interface ScriptedStoreOptions extends StoreWiring {
  /** Hash-tag prefix of every key (`{prefix}:...`). Default `gw`. */
  prefix?: string;
  /** Clock for TTLs and windows, epoch ms. Default `Date.now`. */
  now?: () => number;
}

const PURGE_BATCH = 500;
const SCAN_BATCH = 200;
/** Record characters per scan script at most (after its first record): see `scanScript`. */
const SCAN_CHARS = 1024 * 1024;
/** Bounds one query's walk of an index: index entries read at most. */
const MAX_SCANNED = 5_000 * SCAN_BATCH;

/** Creates the store driver on `runner`. */
export function createScriptedStore(runner: ScriptRunner, options: ScriptedStoreOptions = {}): StoreDriver {
  const keys = createKeyLayout(options.prefix ?? "gw");
  const now = options.now ?? Date.now;
  const summarizeEvent = createEventSummarizer(options.services);
  const appending = new Set<Promise<unknown>>();
  let closed = false;

  const run = async (...args: Parameters<ScriptRunner["run"]>) => {
    try {
      return await runner.run(...args);
    } catch (error) {
      throw new StoreUnavailableError(`${runner.name} store: ${error instanceof Error ? error.message : error}`);
    }
  };
  const ttl = (ms: number) => Math.max(1, Math.ceil(ms));

  /** The index sets an event belongs to. */
  const indexesOfRecord = (record: EventRecord) => {
    const summary = summarizeEvent(record);
    const indexes = [keys.bySource(summary.sourceId), keys.byType(summary.type)];
    if (summary.subject !== undefined) indexes.push(keys.bySubject(summary.subject));
    if (summary.externalId !== undefined) indexes.push(keys.byExternalId(summary.externalId));
    return { summary, indexes };
  };

  const doAppend = async (record: EventRecord, dedupeKey: string, dedupeTtlMs: number): Promise<AppendResult> => {
    const { summary, indexes } = indexesOfRecord(record);
    const mark = `d|${now() + dedupeTtlMs}|${record.id}`;
    const reply = (await run(
      appendScript,
      [keys.seq, keys.event(record.id), keys.mark(dedupeKey), keys.log, keys.time, keys.types, ...indexes],
      [
        encodeURIComponent(record.id),
        JSON.stringify({ ...record, seq: 0 }),
        record.receivedAt,
        mark,
        ttl(dedupeTtlMs),
        encodeURIComponent(summary.type),
        indexes.join("\n"),
      ],
    )) as [number, number];
    return { inserted: Number(reply[0]) === 1, seq: Number(reply[1]) };
  };

  return {
    name: runner.name,
    async claim(dedupeKey, claimTtlMs): Promise<ClaimResult> {
      const t = now();
      const reply = (await run(claimScript, [keys.mark(dedupeKey)], [t, `c|${t + claimTtlMs}`, ttl(claimTtlMs)])) as [
        string,
        string?,
      ];
      if (reply[0] === "duplicate") return { status: "duplicate", id: reply[1] ?? "" };
      return reply[0] === "claimed" ? { status: "claimed" } : { status: "in_progress" };
    },
    append(record, dedupeKey, dedupeTtlMs) {
      if (closed) return Promise.reject(new StoreUnavailableError(`${runner.name} store is closed`));
      const pending = doAppend(record, dedupeKey, dedupeTtlMs);
      appending.add(pending);
      pending.then(
        () => appending.delete(pending),
        () => appending.delete(pending),
      );
      return pending;
    },
    async release(dedupeKey) {
      await run(releaseScript, [keys.mark(dedupeKey)], []);
    },
    async get(id) {
      const reply = (await run(getScript, [keys.event(id)], [])) as [number, string] | null;
      return reply ? parseRecord(Number(reply[0]), reply[1]) : undefined;
    },
    async list(query): Promise<EventPage> {
      const bound = query.after === undefined ? "+inf" : String(query.after);
      const found = await walk(run, keys, summarizeEvent, query, "desc", bound, query.limit + 1);
      const events = found.slice(0, query.limit);
      return { events, next: found.length > query.limit ? (events[events.length - 1] as EventRecord).seq : null };
    },
    async readAfter(afterSeq, limit, filter = {}) {
      return walk(run, keys, summarizeEvent, { ...filter, limit }, "asc", String(afterSeq), limit);
    },
    async lastSeq() {
      return Number((await run(readScript, [keys.seq], [])) ?? 0);
    },
    async purge(before) {
      let removed = 0;
      for (let round = 0; round < 100_000; round++) {
        const n = Number(
          await run(
            purgeScript,
            [keys.time, keys.log, keys.types],
            [before, keys.eventPrefix, PURGE_BATCH, keys.typeIndexPrefix],
          ),
        );
        removed += n;
        if (n < PURGE_BATCH) break;
      }
      // Dedupe marks and kv values expire by their Redis TTLs.
      return removed;
    },
    async removeEvents(ids) {
      let removed = 0;
      for (let i = 0; i < ids.length; i += PURGE_BATCH) {
        const batch = ids.slice(i, i + PURGE_BATCH).map((id) => encodeURIComponent(id));
        removed += Number(
          await run(
            removeScript,
            [keys.time, keys.log, keys.types],
            [keys.eventPrefix, keys.typeIndexPrefix, ...batch],
          ),
        );
      }
      return removed;
    },
    async redactEvents(records) {
      let replaced = 0;
      for (const record of records) {
        const { summary, indexes } = indexesOfRecord(record);
        replaced += Number(
          await run(
            redactScript,
            [keys.event(record.id)],
            [
              encodeURIComponent(record.id),
              JSON.stringify({ ...record, seq: 0 }),
              encodeURIComponent(summary.type),
              indexes.join("\n"),
            ],
          ),
        );
      }
      return replaced;
    },
    ping: () => runner.ping(),
    async kvGet(key) {
      const raw = (await run(readScript, [keys.kv(key)], [])) as string | null;
      if (raw === null) return undefined;
      const bar = raw.indexOf("|");
      return Number(raw.slice(0, bar)) > now() ? raw.slice(bar + 1) : undefined;
    },
    async kvSet(key, value, ttlMs) {
      await run(writeScript, [keys.kv(key)], [`${now() + ttlMs}|${value}`, ttl(ttlMs)]);
    },
    async kvSetIfAbsent(key, value, ttlMs) {
      const t = now();
      return Number(await run(setIfAbsentScript, [keys.kv(key)], [t, `${t + ttlMs}|${value}`, ttl(ttlMs)])) === 1;
    },
    async kvDelete(key) {
      await run(deleteScript, [keys.kv(key)], []);
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...appending]);
      await runner.close();
    },
  };
}

function parseRecord(seq: number, json: string): EventRecord {
  return { ...(JSON.parse(json) as EventRecord), seq };
}

/**
 * The index sets a query walks: the most selective exact filter, else the sets of the types a
 * glob matches, else the source, else the whole log. The other filters apply to what it yields.
 */
async function indexesOf(run: ScriptRunner["run"], keys: KeyLayout, query: EventQuery): Promise<string[]> {
  if (query.externalId !== undefined) return [keys.byExternalId(query.externalId)];
  if (query.subject !== undefined) return [keys.bySubject(query.subject)];
  if (query.type !== undefined && query.type !== "*") {
    if (!query.type.includes("*")) return [keys.byType(query.type)];
    const matches = compileTypePattern(query.type);
    const types = ((await run(membersScript, [keys.types], [])) as string[]).map(decodeURIComponent);
    return types.filter(matches).map(keys.byType);
  }
  if (query.sourceId !== undefined) return [keys.bySource(query.sourceId)];
  return [keys.log];
}

/** Walks the query's indexes from `bound` (exclusive) in `direction`, up to `want` matches. */
async function walk(
  run: ScriptRunner["run"],
  keys: KeyLayout,
  summarizeEvent: SummarizeEvent,
  query: EventQuery,
  direction: "asc" | "desc",
  bound: string,
  want: number,
): Promise<EventRecord[]> {
  const sets = await indexesOf(run, keys, query);
  if (sets.length === 0) return [];
  const matches = compileEventQuery(query);
  const out: EventRecord[] = [];
  const batch = Math.min(SCAN_BATCH, Math.max(want, 16));
  for (let scanned = 0; scanned < MAX_SCANNED; ) {
    const reply = (await run(scanScript, sets, [
      direction,
      bound,
      batch,
      keys.eventPrefix,
      SCAN_CHARS,
    ])) as ScriptReply[];
    // A page cut short by the character budget ends with one element more (`scanScript`).
    const cut = reply.length % 3 === 1;
    const entries = cut ? reply.length - 1 : reply.length;
    scanned += entries / 3;
    for (let i = 0; i < entries; i += 3) {
      const json = reply[i + 2] as string;
      bound = String(reply[i]);
      if (!json) continue; // purged between the index read and now
      const record = parseRecord(Number(reply[i]), json);
      if (!matches(summarizeEvent(record))) continue;
      out.push(record);
      if (out.length === want) return out;
    }
    if (!cut && entries < batch * 3) break;
  }
  return out;
}
