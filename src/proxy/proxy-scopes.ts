/**
 * Proxy authorization: may this client call this upstream with this method on this path?
 * Path globs are relative to the upstream's `/api/public/v1`: `*` matches one path segment,
 * `**` any number of segments (including none). Paths are matched in their raw (percent-encoded)
 * form after `checkProxyPath` refused the encodings an upstream could decode into a different
 * path than the one that was authorized.
 */
import type { ClientConfig, ProxyScope } from "../config/clients-schema.ts";

interface CompiledScope {
  upstream: string;
  methods: ReadonlySet<string>;
  paths: readonly RegExp[];
}

const compiledByClient = new WeakMap<ClientConfig, CompiledScope[]>();

/** Turns one path glob into an anchored regular expression. */
export function compilePathGlob(glob: string): RegExp {
  const segments = (glob.startsWith("/") ? glob : `/${glob}`).split("/").slice(1);
  let source = "^";
  for (const segment of segments) {
    if (segment === "**") source += "(?:/[^/]*)*";
    else if (segment === "*") source += "/[^/]+";
    else source += `/${segment.split("*").map(escapeRegExp).join("[^/]*")}`;
  }
  return new RegExp(`${source}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function compileScopes(client: ClientConfig): CompiledScope[] {
  let compiled = compiledByClient.get(client);
  if (!compiled) {
    compiled = (client.scopes.proxy ?? []).map((scope: ProxyScope) => ({
      upstream: scope.upstream,
      methods: new Set(scope.methods),
      paths: scope.paths.map(compilePathGlob),
    }));
    compiledByClient.set(client, compiled);
  }
  return compiled;
}

function scopeCovers(scope: CompiledScope, upstreamId: string, method: string): boolean {
  return (
    (scope.upstream === "*" || scope.upstream === upstreamId) && (scope.methods.has("*") || scope.methods.has(method))
  );
}

/** True when one of the client's proxy scopes covers the call. */
export function isProxyCallAllowed(client: ClientConfig, upstreamId: string, method: string, path: string): boolean {
  return compileScopes(client).some(
    (scope) => scopeCovers(scope, upstreamId, method) && scope.paths.some((glob) => glob.test(path)),
  );
}

/** The methods the client may use on an upstream (any path); `*` stands for all. */
export function proxyMethodsOf(client: ClientConfig, upstreamId: string): Set<string> {
  const methods = new Set<string>();
  for (const scope of compileScopes(client)) {
    if (scope.upstream === "*" || scope.upstream === upstreamId) for (const m of scope.methods) methods.add(m);
  }
  return methods;
}

// Encoded slashes and backslashes, and dot segments in any encoding, would let an upstream that
// decodes them reach a path other than the one the glob matched.
const ENCODED_SEPARATOR = /%(?:2f|5c)/i;
// NUL, line breaks and other control characters end or split a path in many stacks (`..%00`).
const CONTROL = /[\u0000-\u001f\u007f]/;
const SAFE_PATH = /^(?:\/[A-Za-z0-9\-._~!$&'()*+,;=:@%]*)+$/;

/** Accepts a raw proxied path (`/agreements/...`) or explains why it is refused. */
export function checkProxyPath(path: string): { ok: true } | { ok: false; reason: string } {
  if (!SAFE_PATH.test(path)) return { ok: false, reason: "the path holds characters that must be percent-encoded" };
  if (!path.includes("%") && !path.includes("/.") && !path.includes(";")) return { ok: true };
  if (ENCODED_SEPARATOR.test(path)) return { ok: false, reason: "encoded slashes are not accepted in the path" };
  for (const segment of path.split("/")) {
    const decoded = decodeSegment(segment);
    if (decoded === undefined) return { ok: false, reason: "the path holds an invalid percent-encoding" };
    // `..;` and `.;x` are dot segments to Tomcat/Spring-style upstreams (path parameters are cut
    // before normalising), so no segment may carry `;` in any encoding.
    if (decoded.includes(";")) return { ok: false, reason: "path parameters (`;`) are not accepted in the path" };
    if (decoded === "." || decoded === "..") return { ok: false, reason: "dot segments are not accepted in the path" };
    if (CONTROL.test(decoded)) return { ok: false, reason: "control characters are not accepted in the path" };
    if (ENCODED_SEPARATOR.test(segment) || /[/\\]/.test(decoded)) {
      return { ok: false, reason: "encoded slashes are not accepted in the path" };
    }
  }
  return { ok: true };
}

/** Accepts a raw query string (`?a=b`, or empty) or explains why it is refused. */
export function checkProxyQuery(search: string): { ok: true } | { ok: false; reason: string } {
  if (!search.includes("%") && !CONTROL.test(search)) return { ok: true };
  const decoded = decodeSegment(search);
  if (decoded !== undefined && CONTROL.test(decoded)) {
    return { ok: false, reason: "control characters are not accepted in the query" };
  }
  return { ok: true };
}

/**
 * A segment as an upstream might end up reading it: percent-decoded until it stops changing
 * (double encoding such as `%252e`), then Unicode-normalised (a full-width `．` is a dot to
 * some stacks). Undefined when an encoding is invalid.
 */
function decodeSegment(segment: string): string | undefined {
  let current = segment;
  for (let round = 0; round < 4 && current.includes("%"); round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return round === 0 ? undefined : current;
    }
    if (next === current) break;
    current = next;
  }
  return current.normalize("NFKC");
}
