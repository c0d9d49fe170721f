/**
 * The outbox contract: where the delivery engine keeps one record per (event, destination), its
 * state, every attempt and the next attempt time, plus the routing cursor (the last event log seq
 * whose deliveries exist) and each destination's paused/disabled state. Drivers live in
 * `adapters/store/*-outbox.ts` and pass one conformance suite (`test/store/outbox-conformance.ts`).
 *
 * Durability rule: a promise returned by a write resolves only once the write would survive a
 * crash of this process, and writes are applied in the order they were made.
 */

export type DeliveryState =
  | "pending"
  | "delivering"
  | "delivered"
  | "failed-retrying"
  | "dead"
  | "paused"
  /** The destination's transform returned null: nothing is sent (counted, not a failure). */
  | "skipped";

export const DELIVERY_STATES: readonly DeliveryState[] = [
  "pending",
  "delivering",
  "delivered",
  "failed-retrying",
  "dead",
  "paused",
  "skipped",
];

/** States a record leaves only by replay. */
export function isTerminal(state: DeliveryState): boolean {
  return state === "delivered" || state === "dead" || state === "skipped";
}

export interface DeliveryAttempt {
  /** Start of the attempt, epoch ms. */
  at: number;
  ok: boolean;
  /** HTTP status or SMTP reply code, when the transport has one. */
  status?: number;
  latencyMs: number;
  /**
   * Why it failed; never secrets or response bodies. May quote the event (a transform's error):
   * erasure replaces it (src/delivery/scrub-delivery.ts).
   */
  error?: string;
  /** A stable failure code, e.g. `transform_error`. */
  code?: string;
  /** The transform returned null: nothing was sent. */
  skipped?: boolean;
  /** Version of the destination's transform that ran (`sha256:` + 16 hex digits). */
  transform?: string;
  /** The transform's console lines of a failed attempt (at most 20); erasure drops them. */
  logs?: string[];
}

export interface DeliveryRecord {
  eventId: string;
  destinationId: string;
  /** Event log seq of the event: the delivery order within a destination. */
  seq: number;
  /** CloudEvent subject, the unit of optional per-subject ordering. */
  subject?: string;
  /** When the event was received, epoch ms (time-range filters and bulk replay). */
  receivedAt: number;
  createdAt: number;
  updatedAt: number;
  state: DeliveryState;
  /** When the next attempt is due, epoch ms (meaningful while not terminal). */
  nextAttemptAt: number;
  /** Failed attempts since creation or the last replay: the position in the retry schedule. */
  failures: number;
  /** The most recent attempts, oldest first (capped at `MAX_KEPT_ATTEMPTS`). */
  attempts: DeliveryAttempt[];
  lastError?: string;
}

export const MAX_KEPT_ATTEMPTS = 50;

/** A destination's durable operator state. */
export interface DestinationState {
  id: string;
  /** Paused by an operator (`POST /destinations/{id}/pause`). */
  paused: boolean;
  /** Disabled by the destination itself (HTTP 410); cleared by resume. */
  disabled: boolean;
  /** Why it is disabled. */
  reason?: string;
  updatedAt: number;
}

export interface DeliveryQuery {
  destinationId: string;
  /** Default: every state. */
  states?: readonly DeliveryState[];
  /** Event receive time range, epoch ms, inclusive from, exclusive to. */
  from?: number;
  to?: number;
  /** Continue after this seq (descending pages). */
  after?: number;
  /** Page size, 1..1000. */
  limit: number;
}

export interface DeliveryPage {
  /** Newest (highest seq) first. */
  deliveries: DeliveryRecord[];
  /** seq of the last record of this page when more may follow, else null. */
  next: number | null;
}

/** Key of a record: one per (event, destination). */
export function deliveryKey(eventId: string, destinationId: string): string {
  return `${eventId}\u0000${destinationId}`;
}

/** Names one record: what leases are renewed by. */
export interface DeliveryRef {
  eventId: string;
  destinationId: string;
}

/**
 * A lease the records made by `createDeliveries` start under: the routing instance keeps what it
 * routes instead of claiming it back in a second transaction (docs/several-instances.md).
 */
export interface CreationLease {
  owner: string;
  /** Lease end, epoch ms. */
  until: number;
  /** Destinations with per-subject ordering: their records with a subject are created unleased. */
  ordered?: readonly string[];
}

/**
 * Whether `record` starts leased under `lease`: all but the records with a subject of an ordered
 * destination, which are taken subject by subject through `claimDue` (an older record of the
 * subject may be another owner's).
 */
export function leasedAtCreation(
  record: Pick<DeliveryRecord, "destinationId" | "subject">,
  lease: CreationLease,
): boolean {
  return record.subject === undefined || !(lease.ordered ?? []).includes(record.destinationId);
}

/**
 * A routing write found the stored routing cursor below the one its caller last knew stored:
 * routing writes acknowledged earlier were lost (an asynchronous commit a server crash took).
 * Nothing was written; the caller routes again from `stored` (re-creation is idempotent).
 */
export class RoutingCursorBehindError extends Error {
  constructor(
    readonly stored: number,
    readonly expected: number,
  ) {
    super(`the stored routing cursor (${stored}) is behind the one last written or read (${expected})`);
    this.name = "RoutingCursorBehindError";
  }
}

export interface OutboxStore {
  readonly name: string;
  /**
   * True when several gateway instances use this outbox at once (the Redis drivers): the engine
   * then takes records only through `claimDue` leases (docs/several-instances.md).
   */
  readonly shared?: boolean;
  /** The routing cursor: highest event log seq whose deliveries were created (0 at first). */
  readCursor(): Promise<number>;
  /**
   * Inserts the records whose (eventId, destinationId) does not exist yet and moves the routing
   * cursor to `cursor` (never backwards), in one durable step. Resolves with the records that
   * were inserted (a driver may hand back the caller's own objects); existing ones are left
   * untouched (crash recovery re-routes idempotently).
   *
   * With `lease`, the inserted records for which `leasedAtCreation` holds are leased to
   * `lease.owner` until `lease.until` in the same step, as if that owner had claimed them: no
   * other owner's `claimDue` takes them before the lease ends, and the owner renews (or releases)
   * them with `renewLeases`. Existing records keep their lease.
   *
   * `expected`: the cursor the caller last knew stored (read, or moved by its own write). A
   * driver whose routing writes can be lost after they were acknowledged (PostgreSQL's routing
   * transactions commit asynchronously: a crash of the server can take the last ones) rejects
   * the write with `RoutingCursorBehindError`, writing nothing, when the stored cursor is below
   * it: the caller routes again from the stored cursor, so the cursor never passes events whose
   * records were lost. Drivers whose acknowledged writes are durable may ignore it.
   */
  createDeliveries(
    records: readonly DeliveryRecord[],
    cursor: number,
    lease?: CreationLease,
    expected?: number,
  ): Promise<DeliveryRecord[]>;
  /**
   * Optional: `createDeliveries`, also reading every destination's saved state
   * (`listDestinationStates`) within the same step, after the cursor moved. A shared outbox
   * whose reads are round trips offers it so that records created leased to the routing instance
   * reach its lanes in the state the destinations were in at their creation (a pause made
   * through another instance holds them) without one more read in series (lease-poller.ts).
   */
  createDeliveriesWithStates?(
    records: readonly DeliveryRecord[],
    cursor: number,
    lease?: CreationLease,
    expected?: number,
  ): Promise<{ created: DeliveryRecord[]; states: DestinationState[] }>;
  /**
   * Durably replaces records by (eventId, destinationId); inserts them when missing. A replaced
   * record leaves no copy of its old content in the store's tables or keys (after the store's
   * `compact`): erasure scrubs attempt texts through it (src/delivery/scrub-delivery.ts).
   */
  saveDeliveries(records: readonly DeliveryRecord[]): Promise<void>;
  getDelivery(eventId: string, destinationId: string): Promise<DeliveryRecord | undefined>;
  /** Every record of one event, in destination id order. */
  listByEvent(eventId: string): Promise<DeliveryRecord[]>;
  /** Records of one destination, newest first, filtered, paginated by seq. */
  listDeliveries(query: DeliveryQuery): Promise<DeliveryPage>;
  /** Every non-terminal record in ascending seq order: what the engine resumes after a restart. */
  listActive(): Promise<DeliveryRecord[]>;
  /** Record counts per destination and state. */
  countByState(): Promise<Record<string, Partial<Record<DeliveryState, number>>>>;
  listDestinationStates(): Promise<DestinationState[]>;
  saveDestinationState(state: DestinationState): Promise<void>;
  /** Removes terminal records last updated before `before` (epoch ms); returns the count. */
  purge(before: number): Promise<number>;
  /**
   * Leases up to `limit` non-terminal records to `owner` until `now + leaseMs` (a visibility
   * timeout): those whose next attempt is due by `now` and whose previous lease, if any, ended
   * by `now`; earliest due first. While leased, no other owner can claim a record.
   *
   * For the destinations in `ordered` (per-subject ordering), a record with a subject is taken
   * only by the owner of that subject: claiming the subject's oldest unfinished record makes
   * the claimer its owner, for as long as it holds (and renews) a lease on a record of the
   * subject. So one owner at a time delivers a subject, oldest first.
   */
  claimDue(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
    ordered?: readonly string[],
  ): Promise<DeliveryRecord[]>;
  /**
   * Moves `owner`'s leases on `refs` (and its ownership of their subjects) to end at `until`
   * (an end in the past releases them); resolves with the refs not (any longer) leased to `owner`.
   */
  renewLeases(owner: string, refs: readonly DeliveryRef[], until: number): Promise<DeliveryRef[]>;
  /** Flushes pending writes and releases resources. */
  close(): Promise<void>;
}

/** A typed factory per driver. */
export type OutboxFactory<Options> = (options: Options) => OutboxStore | Promise<OutboxStore>;
