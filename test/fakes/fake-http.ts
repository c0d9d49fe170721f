/**
 * The HTTP machinery shared by the upstream fakes: a node:http server on 127.0.0.1 with a random
 * port, a log of every request it saw, injectable faults (an error status, a destroyed socket,
 * a request that never gets an answer), fixed-window rate limits on an injectable clock, and the
 * JSON error envelope of the seeds.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  /** Path relative to the fake's API root (`/agreements/...`), without the query. */
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
}

export type Fault =
  /** Answer with this status (and body/headers) instead of the real handler. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Destroy the socket without an answer (a network fault). */
  | { destroy: true }
  /** Never answer (until the fake closes): a timeout. */
  | { hang: true };

export interface FaultRule {
  method?: string;
  /** Exact relative path, or a pattern. Default: any path. */
  path?: string | RegExp;
  /** How many matching requests get the fault. Default 1. */
  times?: number;
  fault: Fault;
}

export interface FakeServer {
  url: string;
  /** The API root clients append paths to (`{url}/api/public/v1`). */
  baseUrl: string;
  /** Every request seen, in order (faulted ones included). */
  seen: SeenRequest[];
  /** How many requests matched `method` and `path`. */
  count(method: string, path: string | RegExp): number;
  inject(rule: FaultRule): void;
  close(): Promise<void>;
}

export type FakeHandler = (req: IncomingMessage, res: ServerResponse, path: string, url: URL) => Promise<void>;

export const API_ROOT = "/api/public/v1";

function matches(rule: { method?: string; path?: string | RegExp }, method: string, path: string): boolean {
  if (rule.method && rule.method !== method) return false;
  if (rule.path === undefined) return true;
  return typeof rule.path === "string" ? rule.path === path : rule.path.test(path);
}

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Writes the seeds' error envelope. */
export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
) {
  sendJson(res, status, { error: { code, message } }, headers);
}

/** Reads a whole (small) request body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A fixed one-window rate limit per key on the fake's clock. */
export function createRateLimit(limit: number, windowMs: number, now: () => number) {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    hit(key: string) {
      const t = now();
      let window = windows.get(key);
      if (!window || t >= window.start + windowMs) {
        window = { start: t, count: 0 };
        windows.set(key, window);
      }
      window.count++;
      const resetAt = window.start + windowMs;
      return {
        allowed: window.count <= limit,
        limit,
        remaining: Math.max(0, limit - window.count),
        resetAt,
        retryAfterSeconds: Math.max(1, Math.ceil((resetAt - t) / 1000)),
      };
    },
  };
}

/** Starts a fake on 127.0.0.1 with a random port; `handler` serves paths under `/api/public/v1`. */
export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const seen: SeenRequest[] = [];
  const rules: (FaultRule & { left: number })[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake.local");
    const path = url.pathname.startsWith(API_ROOT) ? url.pathname.slice(API_ROOT.length) || "/" : url.pathname;
    const method = req.method ?? "GET";
    seen.push({ method, path, query: url.search, headers: { ...req.headers } });
    const rule = rules.find((r) => r.left > 0 && matches(r, method, path));
    if (rule) {
      rule.left--;
      const { fault } = rule;
      if ("destroy" in fault) return req.socket.destroy();
      if ("hang" in fault) return;
      req.resume();
      return sendJson(res, fault.status, fault.body ?? { error: { code: "server_error", message: "injected" } }, {
        ...fault.headers,
      });
    }
    handler(req, res, path, url).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, "server_error", String(error));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}${API_ROOT}`,
    seen,
    count: (method, path) => seen.filter((s) => matches({ method, path }, s.method, s.path)).length,
    inject: (rule) => rules.push({ ...rule, left: rule.times ?? 1 }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
