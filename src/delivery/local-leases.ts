/**
 * Leases for the single-process outboxes (memory, sqlite, the legacy disk log): kept in memory beside the index, since one
 * process owns those outboxes anyway. They give the single-process drivers the same `claimDue`
 * / `renewLeases` semantics as the shared Redis outbox (subject ownership included), checked
 * by one conformance suite.
 */
import {
  type CreationLease,
  type DeliveryRecord,
  type DeliveryRef,
  deliveryKey,
  isTerminal,
  leasedAtCreation,
  type OutboxStore,
} from "./outbox-contract.ts";
import type { OutboxIndex } from "./outbox-index.ts";

interface Lease {
  owner: string;
  until: number;
}

const keyOf = (r: DeliveryRef) => deliveryKey(r.eventId, r.destinationId);
const subjectOf = (r: DeliveryRecord) => (r.subject === undefined ? undefined : `${r.destinationId}\u0000${r.subject}`);

/** The lease methods of an outbox over `index`, plus the hook its saves call. */
export interface LocalLeases extends Pick<OutboxStore, "claimDue" | "renewLeases"> {
  /**
   * Called after records were saved: a subject whose last unfinished record just finished has
   * nothing left to order, so its owner is dropped (as the Redis script does on the save).
   */
  afterSave(records: readonly DeliveryRecord[]): void;
  /** Leases records just created under `lease` (`createDeliveries` with a lease). */
  afterCreate(created: readonly DeliveryRecord[], lease: CreationLease | undefined): void;
}

/** What the leases read of an outbox: its active records in seq order, and one record. */
export type LeaseView = Pick<OutboxIndex, "active" | "get">;

/** Creates the leases of an outbox over `index` (the in-memory index, or a view of a database). */
export function createLocalLeases(index: LeaseView): LocalLeases {
  const leases = new Map<string, Lease>();
  const subjectOwners = new Map<string, Lease>();
  const dueAt = (record: DeliveryRecord) => Math.max(record.nextAttemptAt, leases.get(keyOf(record))?.until ?? 0);
  return {
    async claimDue(owner, now, leaseMs, limit, ordered = []) {
      const orderedIds = new Set(ordered);
      const active = index.active();
      // The head of a subject: its oldest unfinished record (active() is in seq order).
      const heads = new Map<string, string>();
      for (const record of active) {
        const subject = subjectOf(record);
        if (subject !== undefined && !heads.has(subject)) heads.set(subject, keyOf(record));
      }
      // Finished records and subjects need no lease any more.
      const live = new Set(active.map(keyOf));
      for (const key of leases.keys()) if (!live.has(key)) leases.delete(key);
      for (const subject of subjectOwners.keys()) if (!heads.has(subject)) subjectOwners.delete(subject);
      const out: DeliveryRecord[] = [];
      // A pass that takes over a subject's head may have skipped later records of that
      // subject: one more pass takes them (bounded), as the Redis script does.
      for (let pass = 0; pass < 3 && out.length < limit; pass++) {
        let acquired = false;
        const due = active.filter((r) => dueAt(r) <= now).sort((a, b) => dueAt(a) - dueAt(b) || a.seq - b.seq);
        for (const record of due) {
          if (out.length === limit) break;
          const subject = subjectOf(record);
          if (subject !== undefined && orderedIds.has(record.destinationId)) {
            const holder = subjectOwners.get(subject);
            const owned = holder !== undefined && holder.until > now;
            const allowed = owned ? holder.owner === owner : heads.get(subject) === keyOf(record);
            if (!allowed) continue;
            if (!owned) acquired = true;
            subjectOwners.set(subject, { owner, until: now + leaseMs });
          }
          leases.set(keyOf(record), { owner, until: now + leaseMs });
          out.push(record);
        }
        if (!acquired) break;
      }
      return out;
    },
    afterCreate(created, lease) {
      if (!lease) return;
      for (const record of created) {
        if (leasedAtCreation(record, lease)) leases.set(keyOf(record), { owner: lease.owner, until: lease.until });
      }
    },
    afterSave(records) {
      if (subjectOwners.size === 0) return;
      const finished = records.filter((r) => isTerminal(r.state)).map(subjectOf);
      if (!finished.some((subject) => subject !== undefined && subjectOwners.has(subject))) return;
      const open = new Set(index.active().map(subjectOf));
      for (const subject of finished) if (subject !== undefined && !open.has(subject)) subjectOwners.delete(subject);
    },
    async renewLeases(owner, refs, until) {
      const lost: DeliveryRef[] = [];
      for (const ref of refs) {
        const lease = leases.get(keyOf(ref));
        const record = index.get(ref.eventId, ref.destinationId);
        if (!lease || lease.owner !== owner || !record) {
          lost.push(ref);
          continue;
        }
        lease.until = until;
        const subject = subjectOf(record);
        const holder = subject === undefined ? undefined : subjectOwners.get(subject);
        if (holder?.owner === owner) holder.until = until;
      }
      return lost;
    },
  };
}
