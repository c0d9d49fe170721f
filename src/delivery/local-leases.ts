/**
 * Leases for the in-process outboxes (memory, disk): kept in memory beside the index, since one
 * process owns those outboxes anyway. They give the single-process drivers the same `claimDue`
 * / `renewLeases` semantics as the shared Redis outbox, checked by one conformance suite.
 */
import { type DeliveryRef, deliveryKey, type OutboxStore } from "./outbox-contract.ts";
import type { OutboxIndex } from "./outbox-index.ts";

/** The lease methods of an outbox over `index`. */
export function createLocalLeases(index: OutboxIndex): Pick<OutboxStore, "claimDue" | "renewLeases"> {
  const leases = new Map<string, { owner: string; until: number }>();
  const dueAt = (key: string, nextAttemptAt: number) => Math.max(nextAttemptAt, leases.get(key)?.until ?? 0);
  return {
    async claimDue(owner, now, leaseMs, limit) {
      const due = index
        .active()
        .map((record) => ({ record, key: deliveryKey(record.eventId, record.destinationId) }))
        .filter(({ record, key }) => dueAt(key, record.nextAttemptAt) <= now)
        .sort((a, b) => dueAt(a.key, a.record.nextAttemptAt) - dueAt(b.key, b.record.nextAttemptAt))
        .slice(0, limit);
      for (const { key } of due) leases.set(key, { owner, until: now + leaseMs });
      return due.map(({ record }) => record);
    },
    async renewLeases(owner, refs, until) {
      const lost: DeliveryRef[] = [];
      for (const ref of refs) {
        const key = deliveryKey(ref.eventId, ref.destinationId);
        const lease = leases.get(key);
        if (!lease || lease.owner !== owner || !index.get(ref.eventId, ref.destinationId)) lost.push(ref);
        else lease.until = until;
      }
      return lost;
    },
  };
}
