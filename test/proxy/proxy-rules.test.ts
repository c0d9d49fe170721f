/**
 * Table-driven checks of the proxy's pure rules: path globs (`*` one segment, `**` any),
 * refused path encodings, which calls may be retried, `Retry-After` parsing, and which headers
 * cross the proxy in each direction. Property test: a glob without wildcards matches only itself.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { ClientConfig } from "../../src/config/clients-schema.ts";
import { parseRetryAfter } from "../../src/http/parse-retry-after.ts";
import { buildClientHeaders, buildUpstreamHeaders } from "../../src/proxy/forward-headers.ts";
import { checkProxyPath, compilePathGlob, isProxyCallAllowed } from "../../src/proxy/proxy-scopes.ts";
import { isRetrySafe } from "../../src/proxy/send-upstream.ts";

describe("path globs", () => {
  test.each([
    ["/**", "/", true],
    ["/**", "/agreements/a/b", true],
    ["/agreements/**", "/agreements", true],
    ["/agreements/**", "/agreements/1/download", true],
    ["/agreements/**", "/agreementsX", false],
    ["/agreements/*", "/agreements/1", true],
    ["/agreements/*", "/agreements", false],
    ["/agreements/*", "/agreements/1/download", false],
    ["/agreements/*/download", "/agreements/1/download", true],
    ["/agreements/*/download", "/agreements/1/events", false],
    ["/agreements/**/download", "/agreements/download", true],
    ["/agreements/**/download", "/agreements/1/2/download", true],
    ["/staffing-requests/*/c*", "/staffing-requests/7/calls", true],
    ["/staffing-requests/*/c*", "/staffing-requests/7/events", false],
    ["/a.b", "/aXb", false],
  ])("%s matches %s: %s", (glob, path, expected) => {
    expect(compilePathGlob(glob).test(path)).toBe(expected);
  });

  test("a glob without wildcards matches exactly its own path", () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,8}$/);
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.array(segment, { maxLength: 4 }), (a, b) => {
        const glob = `/${a.join("/")}`;
        const other = `/${b.join("/")}`;
        expect(compilePathGlob(glob).test(glob)).toBe(true);
        expect(compilePathGlob(glob).test(other)).toBe(glob === other);
      }),
    );
  });

  const client = (proxy: ClientConfig["scopes"]["proxy"]): ClientConfig => ({
    id: "c",
    apiKeyHashes: [],
    allowedOrigins: [],
    scopes: { proxy, events: false },
  });

  test.each([
    [[{ upstream: "*", methods: ["*"], paths: ["/**"] }], "esign", "DELETE", "/x", true],
    [[{ upstream: "esign", methods: ["GET"], paths: ["/**"] }], "esign", "POST", "/x", false],
    [[{ upstream: "esign", methods: ["GET"], paths: ["/**"] }], "staffing", "GET", "/x", false],
    [
      [
        { upstream: "esign", methods: ["GET"], paths: ["/a"] },
        { upstream: "esign", methods: ["POST"], paths: ["/b"] },
      ],
      "esign",
      "POST",
      "/b",
      true,
    ],
    [
      [
        { upstream: "esign", methods: ["GET"], paths: ["/a"] },
        { upstream: "esign", methods: ["POST"], paths: ["/b"] },
      ],
      "esign",
      "POST",
      "/a",
      false,
    ],
    [[], "esign", "GET", "/", false],
  ] as const)("scopes %j: %s %s %s -> %s", (scopes, upstream, method, path, expected) => {
    const proxy = scopes.map((s) => ({ ...s, methods: [...s.methods], paths: [...s.paths] }));
    expect(isProxyCallAllowed(client(proxy), upstream, method, path)).toBe(expected);
  });
});

describe("refused paths", () => {
  test.each([
    ["/agreements/1", true],
    ["/agreements/a%20b", true],
    ["/agreements/..%2Fclients", false],
    ["/agreements/%2fclients", false],
    ["/agreements/a%5Cb", false],
    ["/agreements/%2E", false],
    ["/agreements/%zz", false],
    ["/agreements/a b", false],
    ["/agreements/\u00e4", false],
  ])("%s accepted: %s", (path, ok) => {
    expect(checkProxyPath(path).ok).toBe(ok);
  });
});

describe("retry rules", () => {
  test.each([
    ["GET", {}, true],
    ["HEAD", {}, true],
    ["OPTIONS", {}, true],
    ["PUT", {}, true],
    ["DELETE", {}, true],
    ["POST", {}, false],
    ["PATCH", {}, false],
    ["POST", { "idempotency-key": "k" }, true],
    ["PATCH", { "idempotency-key": "k" }, true],
  ])("%s %j may be resent: %s", (method, headers, expected) => {
    expect(isRetrySafe(method, headers as Record<string, string>)).toBe(expected);
  });

  const now = Date.parse("2026-11-24T12:00:00Z");
  test.each([
    ["5", 5000],
    [" 0 ", 0],
    ["Tue, 24 Nov 2026 12:00:30 GMT", 30_000],
    ["Tue, 24 Nov 2026 11:00:00 GMT", 0],
    ["soon", undefined],
    ["-3", undefined],
    [null, undefined],
  ])("Retry-After %j is %j ms", (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe("headers crossing the proxy", () => {
  test("upstream-bound: the allowlist and the request id, never credentials, cookies or hop-by-hop", () => {
    const incoming = new Headers({
      authorization: "Bearer client-key",
      cookie: "a=b",
      connection: "keep-alive",
      "transfer-encoding": "chunked",
      "content-type": "application/pdf",
      accept: "application/json",
      "idempotency-key": "k1",
      "x-request-id": "client-id",
      "x-forwarded-for": "10.0.0.1",
    });
    expect(buildUpstreamHeaders(incoming, "rid-1")).toEqual({
      "content-type": "application/pdf",
      accept: "application/json",
      "idempotency-key": "k1",
      "x-request-id": "rid-1",
      // Always the plain body: a compressed one is decoded (docs/api-proxy.md#compressed-answers).
      "accept-encoding": "identity",
    });
  });

  const UPSTREAM_ANSWER_HEADERS: Record<string, string> = {
    connection: "close, x-private",
    "x-private": "secret-ish",
    "keep-alive": "timeout=5",
    "transfer-encoding": "chunked",
    "set-cookie": "s=1",
    "access-control-allow-origin": "*",
    "content-encoding": "gzip",
    "content-length": "10",
    "content-type": "application/json",
    "retry-after": "3",
    "x-ratelimit-remaining": "7",
    "idempotent-replayed": "true",
    "x-request-id": "upstream-id",
    vary: "Accept",
  };
  // The Node adapter hands the upstream's headers on as a record (repeats joined, set-cookie a list).
  test.each([
    ["Headers", new Headers(UPSTREAM_ANSWER_HEADERS)],
    ["record", { ...UPSTREAM_ANSWER_HEADERS, "set-cookie": ["s=1", "t=2"] }],
  ])(
    "client-bound (%s): hop-by-hop, Connection-named, cookies, upstream CORS and decoded encodings dropped",
    (_, upstream) => {
      const out = buildClientHeaders(upstream, "rid-2", { vary: "Origin" });
      expect(out).toEqual({
        "content-type": "application/json",
        "retry-after": "3",
        "x-ratelimit-remaining": "7",
        "idempotent-replayed": "true",
        "x-request-id": "rid-2",
        vary: "Accept, Origin",
      });
    },
  );
});
