/**
 * Issue 29 row 1 on Workers: a missing or empty secret binding is never filled in. The Worker
 * (adapters/cloudflare/worker.ts, its real `fetch` inside workerd) answers every request 500
 * `internal_error` in the error envelope, `/console/dev-key` included, and logs one error line
 * per problem naming the field and the binding, never a secret's value. Nothing is cached: the
 * same isolate serves normally once the bindings are right.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../adapters/cloudflare/worker.ts";

const BASE = "http://gateway.test";
const ctx = { waitUntil() {}, passThroughOnException() {} };
type Env = Parameters<typeof worker.fetch>[1];

/** The Worker's bindings with `changes` applied (undefined: the binding is absent). */
function bindings(changes: Record<string, string | undefined>): Env {
  const out: Record<string, unknown> = { ...env };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out as unknown as Env;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a Worker with a missing secret binding fails closed", () => {
  it.each<[string, Record<string, string | undefined>, string]>([
    [
      "STAFFING_WEBHOOK_SECRET(S) absent",
      { STAFFING_WEBHOOK_SECRET: undefined, STAFFING_WEBHOOK_SECRETS: undefined },
      "sources.1.secrets.0: environment variable STAFFING_WEBHOOK_SECRET is not set",
    ],
    [
      "ESIGN_WEBHOOK_SECRET empty",
      { ESIGN_WEBHOOK_SECRET: "" },
      "sources.0.secrets.0: environment variable ESIGN_WEBHOOK_SECRET is empty",
    ],
    [
      "a variable GATEWAY_CONFIG references absent",
      { WORKERD_TEST_JWT_SECRET: undefined },
      "environment variable WORKERD_TEST_JWT_SECRET is not set",
    ],
  ])("%s: every request answers 500 internal_error and the log names it", async (_name, changes, problem) => {
    const logged: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => {
      logged.push(String(line));
    });
    const broken = bindings(changes);
    const requests = [
      new Request(`${BASE}/webhooks/esign`, { method: "POST", body: "{}" }),
      new Request(`${BASE}/console/dev-key`),
      new Request(`${BASE}/healthz`),
    ];
    for (const request of requests) {
      const answer = await worker.fetch(request, broken, ctx);
      expect([request.url, answer.status]).toEqual([request.url, 500]);
      const body = (await answer.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("internal_error");
      expect(JSON.stringify(body)).not.toContain("environment variable");
    }
    const lines = logged.map((line) => JSON.parse(line) as { level: string; msg: string; problem: string });
    expect(
      lines.some((l) => l.level === "error" && l.msg === "invalid configuration" && l.problem.endsWith(problem)),
    ).toBe(true);
    for (const secret of [env.ESIGN_WEBHOOK_SECRET, env.STAFFING_WEBHOOK_SECRET]) {
      expect(logged.join("\n")).not.toContain(secret);
    }
  });

  it("the same isolate serves once the bindings are right (nothing was cached)", async () => {
    const answer = await worker.fetch(new Request(`${BASE}/console/dev-key`), env as unknown as Env, ctx);
    expect(answer.status).toBe(404);
  });
});
