/**
 * A fake of the staffing API, written from seeds/staffing-api-v1.md: bearer API-key auth,
 * 60 calls a minute per key with `X-RateLimit-Limit/Remaining/Reset` on every response and 429
 * `rate_limited` with `Retry-After`, `X-Request-Id` echoed, and staffing requests with
 * `Idempotency-Key` replay (`Idempotent-Replayed: true`, 409 `idempotency_conflict` on a
 * different body) and `externalId` idempotency.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRateLimit, type FakeServer, readBody, sendError, sendJson, startFakeServer } from "./fake-http.ts";

export interface StaffingFakeOptions {
  now?: () => number;
  apiKeys?: string[];
  /** Default 60 (documented). */
  limitPerMinute?: number;
}

export interface StaffingFake extends FakeServer {
  apiKey: string;
}

interface StaffingRequest {
  id: string;
  externalId: string;
  status: string;
  shiftId: string | null;
  events: { type: string; at: string }[];
}

/** Starts the fake on a random loopback port. */
export async function startStaffingFake(options: StaffingFakeOptions = {}): Promise<StaffingFake> {
  const now = options.now ?? Date.now;
  const apiKeys = options.apiKeys ?? [`sk_test_${randomBytes(16).toString("hex")}`];
  const rate = createRateLimit(options.limitPerMinute ?? 60, 60_000, now);
  const requests = new Map<string, StaffingRequest>();
  const byExternalId = new Map<string, string>();
  const idempotency = new Map<string, { bodyHash: string; body: unknown }>();

  const create = async (req: IncomingMessage, res: ServerResponse, headers: Record<string, string>) => {
    const raw = await readBody(req);
    const key = req.headers["idempotency-key"] as string | undefined;
    const bodyHash = createHash("sha256").update(raw).digest("hex");
    if (key) {
      const earlier = idempotency.get(key);
      if (earlier && earlier.bodyHash !== bodyHash) {
        return sendError(res, 409, "idempotency_conflict", "Idempotency-Key reused with a different body", headers);
      }
      if (earlier) return sendJson(res, 201, earlier.body, { ...headers, "idempotent-replayed": "true" });
    }
    let input: { externalId?: unknown; external_request_id?: unknown; shift?: { id?: unknown } };
    try {
      input = JSON.parse(raw.toString("utf8"));
    } catch {
      return sendError(res, 400, "invalid_request", "JSON body required", headers);
    }
    const externalId = input.externalId ?? input.external_request_id;
    if (typeof externalId !== "string" || !input.shift) {
      return sendError(res, 400, "invalid_request", "externalId and shift are required", headers);
    }
    let id = byExternalId.get(externalId);
    if (!id) {
      id = randomUUID();
      const at = new Date(now()).toISOString();
      requests.set(id, {
        id,
        externalId,
        status: "queued",
        shiftId: typeof input.shift.id === "string" ? input.shift.id : null,
        events: [{ type: "staffing.queued", at }],
      });
      byExternalId.set(externalId, id);
    }
    const body = { staffingRequestId: id, status: "queued", message: "Staffing request queued" };
    if (key) idempotency.set(key, { bodyHash, body });
    sendJson(res, 201, body, headers);
  };

  const routes = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const method = req.method ?? "GET";
    const headers: Record<string, string> = {};
    const requestId = req.headers["x-request-id"];
    if (typeof requestId === "string") headers["x-request-id"] = requestId;
    if (path === "/healthz" && method === "GET") return sendJson(res, 200, { ok: true }, headers);
    const key = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
    const limit = rate.hit(key && apiKeys.includes(key) ? key : "anonymous");
    headers["x-ratelimit-limit"] = String(limit.limit);
    headers["x-ratelimit-remaining"] = String(limit.remaining);
    headers["x-ratelimit-reset"] = String(Math.ceil(limit.resetAt / 1000));
    if (!key || !apiKeys.includes(key)) {
      req.resume();
      return sendError(res, 401, "unauthorized", "bearer API key missing or invalid", headers);
    }
    if (!limit.allowed) {
      req.resume();
      return sendError(res, 429, "rate_limited", "too many calls", {
        ...headers,
        "retry-after": String(limit.retryAfterSeconds),
      });
    }
    if (path === "/me" && method === "GET") return sendJson(res, 200, { organizationId: "org_test" }, headers);
    if (path === "/staffing-requests" && method === "POST") return create(req, res, headers);
    const match = /^\/staffing-requests\/([^/]+)(?:\/(cancel|calls|events))?$/.exec(path);
    const found = match ? requests.get(match[1] as string) : undefined;
    req.resume();
    if (!match || !found) return sendError(res, 404, "not_found", "the staffing request does not exist", headers);
    const action = match[2];
    if (!action && method === "GET") {
      return sendJson(res, 200, { id: found.id, status: found.status, shiftId: found.shiftId, calls: [] }, headers);
    }
    if (action === "cancel" && method === "POST") {
      found.status = "cancelled";
      found.events.push({ type: "staffing.cancelled", at: new Date(now()).toISOString() });
      return sendJson(res, 200, { id: found.id, status: found.status }, headers);
    }
    if (action === "calls" && method === "GET") return sendJson(res, 200, { calls: [] }, headers);
    if (action === "events" && method === "GET") return sendJson(res, 200, { events: found.events }, headers);
    sendError(res, 404, "not_found", "no such endpoint", headers);
  };

  const server = await startFakeServer(routes);
  return { ...server, apiKey: apiKeys[0] as string };
}
