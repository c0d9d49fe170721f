/**
 * What an emulator saw and the faults it was told to inject: every request is logged (method,
 * path relative to the API root, query, headers; bounded), counted, and may be answered with an
 * injected fault instead of the real handler: an error status, a dropped connection, or no
 * answer at all. Tests and users reach it through `POST /_emulator/faults` and
 * `GET /_emulator/requests`, or directly in-process.
 */
import { pushBounded } from "./bounded-map.ts";

export interface SeenRequest {
  method: string;
  /** Path relative to the API root (`/agreements/...`), without the query. */
  path: string;
  query: string;
  headers: Record<string, string>;
}

export type Fault =
  /** Answer with this status (and body/headers) instead of the real handler. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Drop the connection without an answer (where the runtime exposes the socket). */
  | { destroy: true }
  /** Never answer (until the emulator closes): a timeout. */
  | { hang: true };

export interface FaultRule {
  method?: string;
  /** Exact relative path, or a pattern. Default: any path. */
  path?: string | RegExp;
  /** How many matching requests get the fault. Default 1. */
  times?: number;
  fault: Fault;
}

export interface RequestLog {
  seen: SeenRequest[];
  /** How many requests matched `method` and `path` (all of them, not just those still kept). */
  count(method: string, path: string | RegExp): number;
  inject(rule: FaultRule): void;
  /** Logs a request and returns the fault it should get, if any. */
  record(method: string, path: string, query: string, headers: Headers): Fault | undefined;
  /** Forgets the kept requests (counts stay). */
  clear(): void;
}

const MAX_SEEN = 5_000;

function matches(rule: { method?: string; path?: string | RegExp }, method: string, path: string): boolean {
  if (rule.method && rule.method !== method) return false;
  if (rule.path === undefined) return true;
  return typeof rule.path === "string" ? rule.path === path : rule.path.test(path);
}

/** Creates an empty log. */
export function createRequestLog(): RequestLog {
  const seen: SeenRequest[] = [];
  const counts = new Map<string, number>();
  const rules: (FaultRule & { left: number })[] = [];
  return {
    seen,
    count(method, path) {
      if (typeof path === "string") return counts.get(`${method} ${path}`) ?? 0;
      let total = 0;
      for (const [key, n] of counts) {
        const space = key.indexOf(" ");
        if (key.slice(0, space) === method && path.test(key.slice(space + 1))) total += n;
      }
      return total;
    },
    inject: (rule) => {
      rules.push({ ...rule, left: rule.times ?? 1 });
    },
    record(method, path, query, headers) {
      pushBounded(seen, { method, path, query, headers: Object.fromEntries(headers) }, MAX_SEEN);
      const key = `${method} ${path}`;
      if (counts.size < 100_000 || counts.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
      const rule = rules.find((r) => r.left > 0 && matches(r, method, path));
      if (!rule) return undefined;
      rule.left--;
      return rule.fault;
    },
    clear() {
      seen.length = 0;
    },
  };
}
