/**
 * How an instance takes work from a shared outbox (docs/several-instances.md): no
 * leader; every instance claims due records with a lease (`claimDue`, a visibility timeout),
 * hands them to its lanes, and renews the leases of what its lanes hold. What an instance routes
 * is created leased to it (`creationLease`, `adopt`): no claim stands between routing and the
 * first attempt. A dead instance stops
 * renewing, so its records become due again for the survivors when their leases end. The same
 * poll takes over pause/resume/disable made through another instance's admin API. On stop, the
 * leases are released so the others take over at once.
 */
import { createCoalescingWake } from "../ops/coalescing-wake.ts";
import type { Logger } from "../ops/logger.ts";
import type { DestinationLane } from "./destination-lane.ts";
import {
  type CreationLease,
  type DeliveryRecord,
  type DeliveryState,
  type DestinationState,
  leasedAtCreation,
  type OutboxStore,
} from "./outbox-contract.ts";
import type { Scheduler } from "./scheduler.ts";
import { markStage } from "./stage-trace.ts";

export interface LeasePollerDeps {
  outbox: OutboxStore;
  lanes: ReadonlyMap<string, DestinationLane>;
  clock: { now(): number };
  scheduler: Scheduler;
  logger: Logger;
  track(work: Promise<unknown>): void;
  persist(records: DeliveryRecord[]): Promise<void>;
  /** This instance's lease owner id. */
  owner: string;
  /** Lease length, ms; renewed every third of it. */
  leaseMs: number;
  /** Claim poll period, ms (new records and replays wake it at once). */
  pollIntervalMs: number;
  /** Records per claim. */
  batchSize: number;
  /** Destinations with per-subject ordering (claimed subject by subject). */
  ordered: readonly string[];
}

export type LeasePoller = ReturnType<typeof createLeasePoller>;

/** Creates the poller; nothing runs until `start`. */
export function createLeasePoller(deps: LeasePollerDeps) {
  const { outbox, lanes, clock } = deps;
  let stopped = true;
  const timers = new Set<{ cancel: () => void }>();
  /**
   * Until when each record this instance took is leased to it, as far as it knows (set by the
   * claim or the creation that gave it the record, moved by each renewal that kept it). A lane
   * starts no attempt of a record whose lease may have ended (a stall longer than the lease: the
   * record may be another instance's by now, and a late attempt could follow a newer event of
   * its subject there); it asks for a renewal first, which keeps the record or forgets it.
   */
  const leasedUntil = new Map<string, number>();
  const leaseKey = (destinationId: string, eventId: string) => `${destinationId}\u0000${eventId}`;
  const noteLeased = (records: readonly DeliveryRecord[], until: number) => {
    for (const record of records) leasedUntil.set(leaseKey(record.destinationId, record.eventId), until);
  };

  /** A claimed record as this instance will hold it ("delivering" means an attempt cut short). */
  const takeOver = (lane: DestinationLane, record: DeliveryRecord): DeliveryRecord => {
    const state: DeliveryState =
      lane.initialState() === "paused" ? "paused" : record.failures > 0 ? "failed-retrying" : "pending";
    return state === record.state ? record : { ...record, state };
  };

  const syncDestinations = async () => {
    for (const state of await outbox.listDestinationStates()) await lanes.get(state.id)?.applySaved(state);
  };

  /**
   * Gives records leased to this instance (claimed, or created leased) to their lanes, in the
   * state the lane's destination puts them in (persisted first when that changed it). A record
   * without a lane here (no sink for its destination, or a reload removed it) is left alone: its
   * lease simply ends.
   */
  const handToLanes = async (records: readonly DeliveryRecord[]) => {
    const fixed: DeliveryRecord[] = [];
    const taken: [DestinationLane, DeliveryRecord][] = [];
    for (const record of records) {
      const lane = lanes.get(record.destinationId);
      if (!lane) continue;
      const next = takeOver(lane, record);
      if (next !== record) fixed.push(next);
      taken.push([lane, next]);
    }
    if (fixed.length > 0) await deps.persist(fixed);
    for (const [lane, record] of taken) {
      markStage("laned", record.receivedAt);
      lane.add(record);
    }
  };

  const claim = async () => {
    await syncDestinations();
    for (let round = 0; round < 1_000 && !stopped; round++) {
      const at = clock.now();
      const claimed = await outbox.claimDue(deps.owner, at, deps.leaseMs, deps.batchSize, deps.ordered);
      noteLeased(claimed, at + deps.leaseMs);
      await handToLanes(claimed);
      if (claimed.length < deps.batchSize) return;
    }
  };

  const { wake } = createCoalescingWake({
    drain: claim,
    stopped: () => stopped,
    onError: (error) => deps.logger.error("claiming due deliveries failed; will retry", { error: String(error) }),
    track: deps.track,
  });

  /**
   * Batches of records created leased to this instance, not in the lanes yet, each with the
   * destinations' states its creation read (when the outbox read them in the same step).
   */
  let adopting: { records: DeliveryRecord[]; states?: readonly DestinationState[] }[] = [];
  /**
   * Hands what `adopt` collected to the lanes in the destinations' saved states, as a claim
   * does: a pause, resume or disable made through another instance's admin API holds these
   * records too (a lane only learns of it from the outbox). The states come with the records'
   * creation when the outbox reads them in the same step (createDeliveriesWithStates); else one
   * read for every batch adopted while the previous read ran. If the read fails, the records
   * stay out of the lanes: their lease ends unrenewed and a claim (this instance's or another's)
   * takes them then.
   */
  const handAdopted = async () => {
    while (adopting.length > 0 && !stopped) {
      const batches = adopting;
      adopting = [];
      const last = batches[batches.length - 1];
      // The newest states read with a creation hold for every batch before it too (they were
      // read later); a batch adopted without states needs a read.
      if (last?.states && batches.every((batch) => batch.states)) {
        for (const state of last.states) await lanes.get(state.id)?.applySaved(state);
      } else await syncDestinations();
      await handToLanes(batches.flatMap((batch) => batch.records));
    }
  };
  const { wake: handAdoptedSoon } = createCoalescingWake({
    drain: handAdopted,
    stopped: () => stopped,
    onError: (error) =>
      deps.logger.error(
        "reading destination states for new deliveries failed; their leases end and a claim takes them",
        {
          error: String(error),
        },
      ),
    track: deps.track,
  });

  const heldRefs = () =>
    [...lanes.values()].flatMap((lane) => lane.heldIds().map((eventId) => ({ eventId, destinationId: lane.id })));

  const renew = async () => {
    const at = clock.now();
    const held = heldRefs();
    const lost = await outbox.renewLeases(deps.owner, held, at + deps.leaseMs);
    const lostKeys = new Set(lost.map((ref) => leaseKey(ref.destinationId, ref.eventId)));
    const heldKeys = new Set<string>();
    for (const ref of held) {
      const key = leaseKey(ref.destinationId, ref.eventId);
      heldKeys.add(key);
      if (!lostKeys.has(key)) leasedUntil.set(key, Math.max(leasedUntil.get(key) ?? 0, at + deps.leaseMs));
    }
    // Finished records: what was leased before this renewal began and is not held any more.
    for (const [key, until] of leasedUntil)
      if (!heldKeys.has(key) && until < at + deps.leaseMs) leasedUntil.delete(key);
    for (const ref of lost) {
      leasedUntil.delete(leaseKey(ref.destinationId, ref.eventId));
      lanes.get(ref.destinationId)?.forget(ref.eventId);
    }
    // Lanes that held back an attempt for a lease that might have lapsed go on.
    for (const lane of lanes.values()) lane.kick();
  };
  const { wake: renewSoon } = createCoalescingWake({
    drain: renew,
    stopped: () => stopped,
    onError: (error) => deps.logger.error("renewing delivery leases failed", { error: String(error) }),
    track: deps.track,
  });

  const every = (ms: number, run: () => void) => {
    const slot = { cancel: () => {} };
    timers.add(slot);
    const loop = () => {
      if (stopped) return;
      run();
      slot.cancel = deps.scheduler.setTimer(ms, loop);
    };
    slot.cancel = deps.scheduler.setTimer(ms, loop);
  };

  return {
    start() {
      stopped = false;
      every(deps.pollIntervalMs, wake);
      every(Math.max(1, Math.floor(deps.leaseMs / 3)), renewSoon);
      wake();
    },
    /** Claims now (new records were created, a replay was saved). */
    wake,
    /**
     * The lease this instance routes under (`createDeliveries`): what it routes is its own at
     * once, without a claim; the subjects of ordered destinations are still claimed.
     */
    creationLease(): CreationLease {
      return { owner: deps.owner, until: clock.now() + deps.leaseMs, ordered: [...deps.ordered] };
    },
    /**
     * Hands the records this instance created under `lease` to their lanes (renewed from then on
     * as any claimed record), in `states` when their creation read the destinations' states; a
     * claim takes those created unleased (ordered subjects).
     */
    adopt(created: readonly DeliveryRecord[], lease: CreationLease, states?: readonly DestinationState[]) {
      const records = created.filter((record) => leasedAtCreation(record, lease));
      noteLeased(records, lease.until);
      if (records.length > 0) {
        adopting.push({ records, states });
        handAdoptedSoon();
      }
      if (records.length < created.length) wake();
    },
    /**
     * False when the lease of a record in `destinationId`'s lane may have ended by `now` (its
     * lane then holds the attempt back and calls `leaseLapsed`); records this poller did not
     * hand over are not its to judge.
     */
    leaseHeld(destinationId: string, eventId: string, now: number): boolean {
      const until = leasedUntil.get(leaseKey(destinationId, eventId));
      return until === undefined || until > now;
    },
    /** A lane held an attempt back (`leaseHeld`): renew now; the lanes go on after it. */
    leaseLapsed: renewSoon,
    /** Stops claiming and renewing. */
    stop() {
      stopped = true;
      for (const slot of timers) slot.cancel();
      timers.clear();
    },
    /** Releases every lease this instance holds (after its attempts stopped). */
    async release() {
      await outbox.renewLeases(deps.owner, heldRefs(), clock.now());
    },
  };
}
