/**
 * The connect-time checks of `/ws` and `/stream`, in one place for both transports: query
 * parameters (valibot), the bearer credential (header, or `?token=` for browsers), the
 * principal's stream scope, the requested filters against that scope, the destination and the
 * resume cursor. The result is a grant the session runs with, or a refusal with a stable code.
 */
import * as v from "valibot";
import { readBearerCredential } from "../auth/authenticate-client.ts";
import { FilterParamSchema } from "../filters/filter-schema.ts";
import type { EventRecord } from "../store/contract.ts";
import { parseCursor } from "./stream-cursor.ts";
import type { StreamDeps } from "./stream-deps.ts";
import { type StreamFilter, StreamFilterSchema } from "./stream-filter.ts";
import type { StreamErrorCode } from "./stream-frames.ts";
import { compileScope, findScopeViolations, streamScopeOf } from "./stream-scope.ts";

/** What an accepted subscriber may receive and where it starts. */
export interface StreamGrant {
  clientId: string;
  /** Browser origins the client may read the stream from (CORS on SSE). */
  allowedOrigins: readonly string[];
  /** Visible under the principal's scope (configured scope and token claims). */
  inScope: (record: EventRecord) => boolean;
  scopeLayers: ReturnType<typeof streamScopeOf> & { ok: true };
  /** The connect-time filter (subscription `default`). */
  filter: StreamFilter;
  /** Stream destination ids whose events this subscriber receives. */
  destinations: ReadonlySet<string>;
  /** Resume after this event log position; undefined: live from now. */
  since?: number;
  /** Epoch ms at which the credential expires (JWT `exp`). */
  expiresAt?: number;
}

export interface Refusal {
  status: number;
  code: StreamErrorCode;
  message: string;
  details?: unknown;
}

export type AuthorizeResult = { ok: true; grant: StreamGrant } | { ok: false; refusal: Refusal };

const single = (schema: v.GenericSchema<string, string>) =>
  v.optional(
    v.pipe(
      v.array(schema),
      v.maxLength(1, "given once"),
      v.transform((values) => values[0] as string),
    ),
  );

const QuerySchema = v.strictObject({
  ...StreamFilterSchema.entries,
  since: single(v.pipe(v.string(), v.regex(/^\d{1,15}$/, "a cursor from an event frame"))),
  destination: single(v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "a stream destination id"))),
  token: single(v.pipe(v.string(), v.maxLength(4096))),
  /** A content filter as URL-encoded JSON (docs/filters.md). */
  filter: v.optional(
    v.pipe(
      v.array(v.string()),
      v.maxLength(1, "given once"),
      v.transform((values) => values[0] as string),
      FilterParamSchema,
    ),
  ),
});

function queryObject(url: URL): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, value] of url.searchParams) {
    const values = out[key] ?? [];
    values.push(value);
    out[key] = values;
  }
  return out;
}

const refuse = (status: number, code: StreamErrorCode, message: string, details?: unknown): AuthorizeResult => ({
  ok: false,
  refusal: { status, code, message, details },
});

/**
 * Authorizes one subscriber. `lastEventId` (SSE's `Last-Event-ID` header) takes precedence
 * over `?since=`: it is what an automatic reconnection sends.
 */
export async function authorizeSubscriber(
  ctx: StreamDeps,
  streamDestinationIds: readonly string[],
  request: Request,
  url: URL,
  lastEventId?: string | null,
): Promise<AuthorizeResult> {
  const query = v.safeParse(QuerySchema, queryObject(url));
  if (!query.success) {
    return refuse(400, "invalid_request", "invalid query parameters", {
      issues: query.issues.map((issue) => ({ param: v.getDotPath(issue), message: issue.message })),
    });
  }
  const { since: sinceText, destination, token: _token, ...filter } = query.output;

  const auth = await ctx.clients.authenticate(readBearerCredential(request, url, true), "stream");
  if (!auth.ok) {
    if (auth.reason === "expired_credentials") return refuse(401, "token_expired", "the token has expired");
    return refuse(401, "unauthorized", "a valid token is required (Authorization: Bearer, or ?token=)");
  }
  const scope = streamScopeOf(auth.principal);
  if (!scope.ok) return refuse(scope.code === "forbidden" ? 403 : 401, scope.code, scope.message);
  const violations = findScopeViolations(scope.layers, filter);
  if (violations.length > 0) {
    return refuse(403, "forbidden", "the requested filters are outside this subscriber's scope", {
      outsideScope: violations,
    });
  }

  if (streamDestinationIds.length === 0) return refuse(404, "not_found", "no live stream destination is configured");
  if (destination !== undefined && !streamDestinationIds.includes(destination)) {
    return refuse(404, "not_found", `no stream destination "${destination}"`);
  }

  const cursorText = lastEventId ?? sinceText;
  const since = cursorText === undefined ? undefined : parseCursor(cursorText);
  if (cursorText !== undefined && since === undefined) {
    return refuse(400, "invalid_request", "the cursor is not one this gateway issued");
  }
  return {
    ok: true,
    grant: {
      clientId: auth.principal.client.id,
      allowedOrigins: auth.principal.client.allowedOrigins,
      inScope: compileScope(scope.layers),
      scopeLayers: scope,
      filter,
      destinations: destination === undefined ? allDestinationsOf(streamDestinationIds) : new Set([destination]),
      since,
      expiresAt: auth.principal.expiresAt,
    },
  };
}

/** One set of every stream destination, shared by the grants that name none (most subscribers). */
const allDestinations = new WeakMap<readonly string[], ReadonlySet<string>>();
function allDestinationsOf(ids: readonly string[]): ReadonlySet<string> {
  let set = allDestinations.get(ids);
  if (!set) {
    set = new Set(ids);
    allDestinations.set(ids, set);
  }
  return set;
}
