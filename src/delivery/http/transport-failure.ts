/**
 * What a failed HTTP attempt was, on every runtime: refused by the SSRF guard, no answer within
 * the deadline, aborted by shutdown, or the network. Each transport says what it saw; this is the
 * one order in which those facts are read.
 */
import type { HttpSendResult } from "./http-sink.ts";

export interface TransportFailureFacts {
  /** The SSRF guard's reason, when it refused the destination's addresses. */
  refusal?: string;
  /** The attempt's own deadline passed. */
  timedOut: boolean;
  /** The caller's (shutdown) signal aborted the attempt. */
  aborted: boolean;
  /** What the network said: an error code or name, never a URL or body. */
  detail: string;
}

/** The failed result of an attempt, from what its transport saw. */
export function toTransportFailure(facts: TransportFailureFacts, timeoutMs: number): HttpSendResult {
  if (facts.refusal !== undefined) return { ok: false, failure: "refused", detail: facts.refusal };
  if (facts.timedOut) return { ok: false, failure: "timeout", detail: `no answer within ${timeoutMs} ms` };
  if (facts.aborted) return { ok: false, failure: "aborted", detail: "aborted" };
  return { ok: false, failure: "network", detail: facts.detail };
}
