/**
 * `POST /transforms/test` (admin API key): runs a transform on a recorded event and answers with
 * the payload it makes, or the error and its logs, without delivering anything. The transform is
 * a destination's configured one (`destination`), a module (`code`) or a built-in (`builtin`).
 * `gateway transform test` and the console's event view call it.
 */
import type { H3 } from "h3";
import * as v from "valibot";
import { type AdminAuthDeps, requireAdmin } from "../auth/admin-auth.ts";
import { createGatewayError } from "../errors.ts";
import { type BodyReader, readJsonBody } from "../http/read-json-body.ts";
import type { StoreDriver } from "../store/contract.ts";
import { TransformCompileError } from "./quickjs-sandbox.ts";
import { type PreparedTransform, toTransformEvent } from "./transform-contract.ts";
import type { TransformRegistry } from "./transform-registry.ts";
import { BUILTIN_TRANSFORMS } from "./transform-schema.ts";
import { redactHeaders } from "./transforming-sink.ts";

/** What the transform test route uses: the transforms, the event log, the destinations, the admin check. */
export interface TransformTestDeps extends AdminAuthDeps {
  /** Undefined when the runtime provides no sandbox. */
  transforms?: TransformRegistry;
  store: Pick<StoreDriver, "get">;
  readBody: BodyReader;
  /** The configured destinations (an unknown destination is answered 404). */
  config: { destinations: readonly { id: string }[] };
}

const MAX_BODY_BYTES = 512 * 1024;

const TestBody = v.pipe(
  v.strictObject({
    /** The gateway event id to run on. */
    event: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
    /** Run this destination's configured transform. */
    destination: v.optional(v.pipe(v.string(), v.maxLength(63))),
    /** Or this module. */
    code: v.optional(v.pipe(v.string(), v.maxLength(256 * 1024))),
    /** Or this built-in. */
    builtin: v.optional(v.picklist(BUILTIN_TRANSFORMS)),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 50),
    memoryLimitMb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(256)), 16),
  }),
  v.check(
    (body) => [body.destination, body.code, body.builtin].filter((x) => x !== undefined).length === 1,
    "exactly one of destination, code or builtin",
  ),
);

/** The answer of one test run. */
export type TransformTestAnswer =
  | { ok: true; skipped: boolean; result: unknown; logs: string[]; version: string; durationMs: number }
  | { ok: false; error: { code: "transform_error"; message: string }; logs: string[]; version?: string };

async function readBody(ctx: { readBody: BodyReader }, request: Request): Promise<v.InferOutput<typeof TestBody>> {
  // Counted while reading, chunked or not (read-json-body.ts).
  const value = await readJsonBody(ctx.readBody, request, { limit: MAX_BODY_BYTES });
  const parsed = v.safeParse(TestBody, value);
  if (!parsed.success) {
    throw createGatewayError(400, "invalid_request", "invalid request", {
      details: parsed.issues.map((issue) => ({ field: v.getDotPath(issue), message: issue.message })),
    });
  }
  return parsed.output;
}

const failure = (message: string, logs: string[] = [], version?: string): TransformTestAnswer => ({
  ok: false,
  error: { code: "transform_error", message },
  logs,
  ...(version ? { version } : {}),
});

/** Runs the test described by `body`; throws the HTTP errors of unknown events or destinations. */
export async function runTransformTest(
  ctx: TransformTestDeps,
  body: v.InferOutput<typeof TestBody>,
): Promise<TransformTestAnswer> {
  const registry = ctx.transforms;
  if (!registry) throw createGatewayError(404, "not_found", "this gateway runs no transforms");
  const record = await ctx.store.get(body.event);
  if (!record) throw createGatewayError(404, "not_found", `no event "${body.event}" in the log`);
  const limits = { timeoutMs: body.timeoutMs, memoryLimitMb: body.memoryLimitMb };
  let transform: PreparedTransform | undefined;
  let owned = false;
  try {
    if (body.destination !== undefined) {
      if (!ctx.config.destinations.some((d) => d.id === body.destination)) {
        throw createGatewayError(404, "not_found", `no destination "${body.destination}"`);
      }
      transform = await registry.forDestination(body.destination);
      if (!transform) throw createGatewayError(404, "not_found", `destination "${body.destination}" has no transform`);
    } else {
      owned = true;
      transform = await registry.compile(
        body.builtin ? { ...limits, builtin: body.builtin } : { ...limits, code: body.code as string },
      );
    }
  } catch (error) {
    if (error instanceof TransformCompileError) return failure(error.message);
    throw error;
  }
  try {
    const started = performance.now();
    const outcome = await transform.run(toTransformEvent(record.event), {
      destination: body.destination ?? "test",
      attempt: 1,
      headers: redactHeaders(record.headers),
    });
    const durationMs = Math.round((performance.now() - started) * 100) / 100;
    if (!outcome.ok) return failure(outcome.message, outcome.logs, transform.version);
    return {
      ok: true,
      skipped: outcome.skip,
      result: outcome.skip ? null : JSON.parse(outcome.json),
      logs: outcome.logs,
      version: transform.version,
      durationMs,
    };
  } finally {
    if (owned) transform.dispose();
  }
}

/** Registers `POST /transforms/test`. */
export function registerTransformRoutes(app: H3, ctx: TransformTestDeps): void {
  app.post("/transforms/test", async (event) => {
    await requireAdmin(ctx, event.req);
    return runTransformTest(ctx, await readBody(ctx, event.req));
  });
}
