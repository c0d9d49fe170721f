/**
 * The outbox contract on Redis, shared by every gateway instance on the same Redis and prefix
 * (no leader): records, indexes and the routing cursor live in Redis, and `claimDue` leases a
 * due record to one instance at a time (a visibility timeout), so a dead instance's records
 * return to the others when its leases end. Written once against a `ScriptRunner` (ioredis
 * and Upstash). Scripts: outbox-scripts.ts; keys: adapters/store/redis/redis-keys.ts.
 */
import {
  type CreationLease,
  type DeliveryRecord,
  type DeliveryRef,
  type DeliveryState,
  type DestinationState,
  isTerminal,
  leasedAtCreation,
  type OutboxStore,
} from "../../../src/delivery/outbox-contract.ts";
import { createKeyLayout } from "../../store/redis/redis-keys.ts";
import type { ScriptReply, ScriptRunner } from "../../store/redis/script-runner.ts";
import { readScript } from "../../store/redis/store-scripts.ts";
import {
  claimDueScript,
  createDeliveriesScript,
  hashAllScript,
  hashFieldScript,
  hashSetScript,
  listActiveScript,
  listByEventScript,
  purgeDeliveriesScript,
  renewLeasesScript,
  saveDeliveriesScript,
  scanDestinationScript,
} from "./outbox-scripts.ts";

export interface ScriptedOutboxOptions {
  /** Hash-tag prefix of every key; the store's. Default `gw`. */
  prefix?: string;
}

/** Records per script call (a script blocks Redis while it runs). */
const WRITE_BATCH = 256;
const SCAN_BATCH = 200;

/** Creates the shared outbox on `runner`. */
export function createScriptedOutbox(runner: ScriptRunner, options: ScriptedOutboxOptions = {}): OutboxStore {
  const keys = createKeyLayout(options.prefix ?? "gw").outbox;
  const fixed = [keys.cursor, keys.counts, keys.active, keys.due, keys.done, keys.subjectOwners];
  const enc = encodeURIComponent;
  const recordKey = (ref: DeliveryRef) => keys.record(ref.eventId, ref.destinationId);
  const parse = (json: string) => JSON.parse(json) as DeliveryRecord;

  // The contract applies writes in call order; over REST, requests can overtake each other.
  let tail: Promise<unknown> = Promise.resolve();
  const inOrder = <T>(work: () => Promise<T>): Promise<T> => {
    if (runner.ordered) return work();
    const next = tail.then(work);
    tail = next.catch(() => {});
    return next;
  };

  const write = (
    script: typeof saveDeliveriesScript,
    records: readonly DeliveryRecord[],
    cursor: number,
    lease?: CreationLease,
  ) => {
    const recordKeys: string[] = [];
    const args: (string | number)[] = [cursor];
    for (const r of records) {
      recordKeys.push(recordKey(r), keys.byDestination(r.destinationId), keys.byEvent(r.eventId));
      args.push(
        enc(r.eventId),
        enc(r.destinationId),
        r.seq,
        r.state,
        r.nextAttemptAt,
        r.updatedAt,
        JSON.stringify(r),
        isTerminal(r.state) ? "1" : "0",
        r.subject === undefined ? "" : keys.bySubject(r.destinationId, r.subject),
      );
    }
    if (lease) {
      args.push(lease.owner, lease.until);
      for (const r of records) args.push(leasedAtCreation(r, lease) ? "1" : "0");
    }
    return inOrder(() => runner.run(script, [...fixed, ...recordKeys], args));
  };

  return {
    name: runner.name,
    shared: true,
    async readCursor() {
      return Number((await runner.run(readScript, [keys.cursor], [])) ?? 0);
    },
    async createDeliveries(records, cursor, lease) {
      const inserted: DeliveryRecord[] = [];
      for (let i = 0; i < Math.max(records.length, 1); i += WRITE_BATCH) {
        const batch = records.slice(i, i + WRITE_BATCH);
        // The cursor moves with the last batch only, so a failure part-way re-routes the rest.
        const last = i + WRITE_BATCH >= records.length;
        const positions = (await write(createDeliveriesScript, batch, last ? cursor : 0, lease)) as number[];
        for (const p of positions) inserted.push(structuredClone(batch[Number(p)] as DeliveryRecord));
      }
      return inserted;
    },
    async saveDeliveries(records) {
      for (let i = 0; i < records.length; i += WRITE_BATCH) {
        await write(saveDeliveriesScript, records.slice(i, i + WRITE_BATCH), 0);
      }
    },
    async getDelivery(eventId, destinationId) {
      const raw = (await runner.run(hashFieldScript, [keys.record(eventId, destinationId)], ["j"])) as string | null;
      return raw ? parse(raw) : undefined;
    },
    async listByEvent(eventId) {
      const reply = (await runner.run(
        listByEventScript,
        [keys.byEvent(eventId)],
        [keys.recordPrefix, enc(eventId)],
      )) as string[];
      return reply.map(parse).sort((a, b) => (a.destinationId < b.destinationId ? -1 : 1));
    },
    async listDeliveries(query) {
      const states = query.states ? new Set(query.states) : undefined;
      const out: DeliveryRecord[] = [];
      let bound = query.after === undefined ? "+inf" : String(query.after);
      for (let round = 0; round < 5_000; round++) {
        const reply = (await runner.run(
          scanDestinationScript,
          [keys.byDestination(query.destinationId)],
          [bound, SCAN_BATCH, keys.recordPrefix, enc(query.destinationId)],
        )) as ScriptReply[];
        for (let i = 0; i < reply.length; i += 2) {
          bound = String(reply[i]);
          if (!reply[i + 1]) continue;
          const record = parse(reply[i + 1] as string);
          if (states && !states.has(record.state)) continue;
          if (query.from !== undefined && record.receivedAt < query.from) continue;
          if (query.to !== undefined && record.receivedAt >= query.to) continue;
          if (out.length === query.limit) return { deliveries: out, next: out[out.length - 1]?.seq ?? null };
          out.push(record);
        }
        if (reply.length < SCAN_BATCH * 2) break;
      }
      return { deliveries: out, next: null };
    },
    async listActive() {
      const reply = (await runner.run(listActiveScript, [keys.active], [])) as string[];
      return reply.map(parse).sort((a, b) => a.seq - b.seq || (a.destinationId < b.destinationId ? -1 : 1));
    },
    async countByState() {
      const flat = (await runner.run(hashAllScript, [keys.counts], [])) as string[];
      const out: Record<string, Partial<Record<DeliveryState, number>>> = {};
      for (let i = 0; i < flat.length; i += 2) {
        const n = Number(flat[i + 1]);
        if (n <= 0) continue;
        const field = flat[i] as string;
        const bar = field.lastIndexOf("|");
        const destination = decodeURIComponent(field.slice(0, bar));
        const perState = out[destination] ?? {};
        out[destination] = perState;
        perState[field.slice(bar + 1) as DeliveryState] = n;
      }
      return out;
    },
    async listDestinationStates() {
      const flat = (await runner.run(hashAllScript, [keys.destinationStates], [])) as string[];
      const states: DestinationState[] = [];
      for (let i = 1; i < flat.length; i += 2) states.push(JSON.parse(flat[i] as string) as DestinationState);
      return states.sort((a, b) => (a.id < b.id ? -1 : 1));
    },
    async saveDestinationState(state) {
      await inOrder(() => runner.run(hashSetScript, [keys.destinationStates], [state.id, JSON.stringify(state)]));
    },
    async purge(before) {
      let removed = 0;
      for (let round = 0; round < 100_000; round++) {
        const n = Number(await runner.run(purgeDeliveriesScript, fixed, [before, 500]));
        removed += n;
        if (n < 500) break;
      }
      return removed;
    },
    async claimDue(owner, now, leaseMs, limit, ordered = []) {
      const reply = (await runner.run(
        claimDueScript,
        [keys.due, keys.subjectOwners],
        [now, now + leaseMs, limit, owner, ...ordered.map(enc)],
      )) as string[];
      return reply.map(parse);
    },
    async renewLeases(owner, refs, until) {
      const lost: DeliveryRef[] = [];
      for (let i = 0; i < refs.length; i += WRITE_BATCH) {
        const batch = refs.slice(i, i + WRITE_BATCH);
        const positions = (await runner.run(
          renewLeasesScript,
          [keys.due, keys.subjectOwners, ...batch.map(recordKey)],
          [until, owner],
        )) as number[];
        for (const p of positions) lost.push(batch[Number(p)] as DeliveryRef);
      }
      return lost;
    },
    async close() {
      await runner.close();
    },
  };
}
