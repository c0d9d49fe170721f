/**
 * Shapes of the gateway's public answers that the console reads
 * (docs/ingress-and-verification.md#event-log-api, docs/fan-out-and-destinations.md,
 * docs/live-stream.md).
 */

export interface CloudEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  subject?: string;
  time: string;
  data?: unknown;
  service?: string;
  receivedtime?: string;
  [extension: string]: unknown;
}

export interface EventSummary {
  id: string;
  seq: number;
  state: string;
  marks: string[];
  event: CloudEvent;
}

export interface EventPage {
  events: EventSummary[];
  next_cursor: string | null;
}

export interface Attempt {
  at: string;
  ok: boolean;
  status: number | null;
  latency_ms: number;
  error: string | null;
  /** Destinations with a transform (docs/transformations.md). */
  code?: string;
  skipped?: boolean;
  transform?: string;
  logs?: string[];
}

/** The answer of `POST /transforms/test`. */
export type TransformTestAnswer =
  | { ok: true; skipped: boolean; result: unknown; logs: string[]; version: string; durationMs: number }
  | { ok: false; error: { code: string; message: string }; logs: string[]; version?: string };

export interface Delivery {
  event_id: string;
  destination: string;
  state: string;
  subject: string | null;
  created_at: string | null;
  updated_at: string | null;
  next_attempt_at: string | null;
  failures: number;
  last_error: string | null;
  attempts: Attempt[];
}

export interface EventDetail extends EventSummary {
  source_id: string;
  received_at: string;
  raw_body_base64: string;
  headers: Record<string, string>;
  deliveries: Delivery[];
}

export interface Destination {
  id: string;
  type: string;
  state: string;
  reason: string | null;
  breaker: { state: string; consecutive_failures: number; probe_at: string | null };
  backlog: number;
  inflight: number;
  counts: Record<string, number>;
  last_error: { at: string; error: string } | null;
  last_success_at: string | null;
}

export interface TestEventSource {
  id: string;
  service: string;
  types: string[];
}
