/**
 * A content filter in a client's configured stream scope and in a token's `stream` claim: both
 * narrow what the subscriber sees (every layer applies), a malformed claim filter is refused.
 */
import { describe, expect, it } from "vitest";
import type { ClientPrincipal } from "../../src/auth/authenticate-client.ts";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { compileScope, streamScopeOf } from "../../src/stream/stream-scope.ts";
import { makeRecord } from "../store/sample-records.ts";

const config = resolveConfig(
  {
    sources: [{ id: "esign", service: "esign", secrets: ["s-0123456789abcdef"] }],
    clients: [
      {
        id: "ui",
        apiKeyHashes: [`sha256:${"0".repeat(64)}`],
        scopes: { stream: { types: ["agreement.*"], filter: { data: { status: { $neq: "draft" } } } } },
      },
    ],
  },
  {},
);
const client = config.clients[0] as ClientPrincipal["client"];

function record(status: string, type = "agreement.completed"): EventRecord {
  return makeRecord(1, { type, data: { status, participants: [{ email: "a@x.example" }] } });
}

describe("content filters in stream scopes", () => {
  it("the configured scope's filter and the token's claim filter both apply", () => {
    const configured = streamScopeOf({ client, via: "api-key" });
    if (!configured.ok) throw new Error("refused");
    const visible = compileScope(configured.layers);
    expect(visible(record("completed"))).toBe(true);
    expect(visible(record("draft"))).toBe(false);
    expect(visible(record("completed", "candidate.accepted"))).toBe(false);

    const narrowed = streamScopeOf({
      client,
      via: "jwt",
      claims: { stream: { filter: { data: { participants: { email: { $endsWith: "@y.example" } } } } } },
    });
    if (!narrowed.ok) throw new Error("refused");
    expect(compileScope(narrowed.layers)(record("completed"))).toBe(false);
  });

  it("a token whose claim holds a malformed filter is refused", () => {
    const result = streamScopeOf({ client, via: "jwt", claims: { stream: { filter: { data: { $gtx: 1 } } } } });
    expect(result).toMatchObject({ ok: false, code: "unauthorized" });
  });
});
