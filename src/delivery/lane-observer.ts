/**
 * What a delivery lane tells an observer (the operational events, src/operational-events): each
 * attempt's outcome with the breaker's state after it, and each disable or resume.
 */

export interface AttemptObservation {
  kind: "attempt";
  destination: string;
  eventId: string;
  /** Source of the delivered event, when it was still in the log. */
  sourceId?: string;
  ok: boolean;
  /** How the record ended up: delivered, dead, skipped (by a transform), or waiting for a retry. */
  outcome: "delivered" | "dead" | "skipped" | "retry";
  error?: string;
  /** The destination's status code (HTTP status, SMTP reply), when it answered. */
  status?: number;
  /** The circuit breaker after this attempt. */
  breaker: "closed" | "open" | "half-open";
  at: number;
}

export interface DestinationStateObservation {
  kind: "state";
  destination: string;
  /** `disabled` by the destination (HTTP 410), or `active` again (operator resume). */
  state: "disabled" | "active";
  reason?: string;
  at: number;
}

export type LaneObservation = AttemptObservation | DestinationStateObservation;

/** Receives lane observations; must not throw and must return at once. */
export type LaneObserver = (observation: LaneObservation) => void;
