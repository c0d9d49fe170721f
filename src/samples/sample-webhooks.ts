/**
 * Signed sample deliveries of any registered service (src/services/registry.ts), as its
 * upstream would send them. Behind `gateway trigger`, the tests and the benchmarks; each service
 * builds its own bodies (src/services/<name>/*-samples.ts).
 */
import type { CryptoPort } from "../crypto/crypto-port.ts";
import { builtinServices } from "../services/registry.ts";
import type { SampleDelivery, UpstreamService } from "../services/service-contract.ts";

export type { SampleDelivery } from "../services/service-contract.ts";

export interface SampleRequest {
  /** Unique part of ids; default a random UUID. */
  uniqueId?: string;
  /** Epoch ms used for timestamps and time-bound signatures. Default now. */
  now?: number;
  /** Override the subject (agreement, request, ...) the event belongs to. */
  subjectId?: string;
}

/** A service given by name (looked up among the built-in services) or as a module. */
export type ServiceRef = string | UpstreamService;

function serviceOf(ref: ServiceRef): UpstreamService {
  if (typeof ref !== "string") return ref;
  const service = builtinServices.get(ref);
  if (!service) throw new Error(`unknown service "${ref}"`);
  return service;
}

/** The documented event types of a service. */
export function sampleEventTypes(service: ServiceRef): readonly string[] {
  return serviceOf(service).eventTypes;
}

/** Builds and signs one delivery of `type` for a source of `service` with `secret`. */
export function buildSampleDelivery(
  crypto: CryptoPort,
  service: ServiceRef,
  type: string,
  secret: string,
  options: SampleRequest = {},
): Promise<SampleDelivery> {
  const uniqueId = options.uniqueId ?? globalThis.crypto.randomUUID();
  const now = options.now ?? Date.now();
  return serviceOf(service).buildSample(type, secret, { ...options, uniqueId, now }, crypto);
}
