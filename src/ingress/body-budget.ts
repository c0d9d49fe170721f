/**
 * The process-wide budget of webhook body bytes in flight (`ingress.maxBodyBytesInFlight`,
 * docs/ingress-and-verification.md#bodies-in-flight). Each source's `bodyLimitBytes` bounds one
 * body; nothing else bounded how many are held at once. Bodies are read before the signature can
 * be checked, so without it anyone who can open connections could make the gateway hold
 * `maxConnections` × `bodyLimitBytes` (10 GiB with the defaults), and a burst of large genuine
 * webhooks took about ten times its size in memory until every one was recorded.
 *
 * What counts is what was received, chunk by chunk as it is read, not a declared length: a slow
 * sender holds only the bytes it sent, so stalled connections cannot reserve the budget away. A
 * body whose next chunk does not fit is refused (503 `overloaded`, `Retry-After`, the connection
 * closed) rather than left waiting: a request that waited while holding part of the budget could
 * wait for the others' parts, and the upstreams retry a 503. A webhook keeps its bytes until its
 * answer is made (recorded, a duplicate or refused): the copies made while verifying,
 * normalizing and recording it live that long.
 *
 * Policy only (no runtime objects): the readers (src/ingress/read-raw-body.ts, the Node reader
 * adapters/node/read-node-body.ts) take from a lease per request, receiveWebhook releases it.
 */

/** What one request holds of the budget. */
export interface BodyLease {
  /** Takes `bytes` more; false (nothing taken) when they would pass the budget. */
  take(bytes: number): boolean;
  /** Gives back everything this lease took; later calls do nothing. */
  release(): void;
}

export interface BodyBudget {
  /** A new lease holding nothing yet. */
  lease(): BodyLease;
  /** Bytes held by all leases now. */
  readonly inFlight: number;
}

export interface BodyBudgetOptions {
  /** The budget in bytes, read at every take (a reload changes it for the next chunk). */
  max: () => number;
  /** Told every change of the bytes in flight (a gauge). */
  onChange?: (delta: number) => void;
  /** Told each refused take, with the bytes in flight and the budget then (a rate-limited warning). */
  onRefused?: (inFlight: number, max: number) => void;
}

export function createBodyBudget(options: BodyBudgetOptions): BodyBudget {
  const state = new BudgetState(options);
  return {
    get inFlight() {
      return state.inFlight;
    },
    lease: () => new Lease(state),
  };
}

/** The shared count (a class, like the lease: no closures per webhook on the hot path). */
class BudgetState {
  inFlight = 0;
  readonly options: BodyBudgetOptions;
  constructor(options: BodyBudgetOptions) {
    this.options = options;
  }
}

class Lease implements BodyLease {
  #state: BudgetState;
  #held = 0;
  #released = false;
  constructor(state: BudgetState) {
    this.#state = state;
  }

  take(bytes: number): boolean {
    if (this.#released) return false;
    const state = this.#state;
    // The config check keeps the budget at least as large as every source's `bodyLimitBytes`:
    // a body within its limit always fits once nothing else is in flight.
    const max = state.options.max();
    if (state.inFlight + bytes > max) {
      state.options.onRefused?.(state.inFlight, max);
      return false;
    }
    state.inFlight += bytes;
    this.#held += bytes;
    state.options.onChange?.(bytes);
    return true;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    const held = this.#held;
    if (held === 0) return;
    this.#held = 0;
    this.#state.inFlight -= held;
    this.#state.options.onChange?.(-held);
  }
}
