/**
 * The admin API of the data lifecycle: `POST /events/erase` (erasure by subject, dry run to
 * count) and `POST /events/retention` (preview or run the retention rules now). Admin key only.
 */
import type { H3 } from "h3";
import * as v from "valibot";
import { type AdminAuthDeps, requireAdmin } from "../auth/admin-auth.ts";
import { readJson } from "../delivery/delivery-admin-api.ts";
import { DialectFiltersSchema, FilterSchema } from "../filters/filter-schema.ts";
import type { BodyReader } from "../http/read-json-body.ts";
import { applyRetention } from "./apply-retention.ts";
import { type EraseDeps, eraseEvents } from "./erase-events.ts";
import type { RetentionPolicy } from "./retention-rules.ts";

/** What the lifecycle routes use: erasure's dependencies, the retention policy, the admin check. */
export interface LifecycleApiDeps extends EraseDeps, AdminAuthDeps {
  readBody: BodyReader;
  retention: RetentionPolicy;
}

const EraseBody = v.pipe(
  v.strictObject({
    /** The CloudEvent subject whose events are erased (`agreements/…`, `staffing-requests/…`). */
    subject: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(300))),
    /** A content filter (docs/filters.md): the events it matches are erased (with `subject`: both must hold). */
    filter: v.optional(FilterSchema),
    /** CloudEvents Subscriptions dialect expressions; all must match. */
    filters: v.optional(DialectFiltersSchema),
    /** Count only. Default false. */
    dryRun: v.optional(v.boolean(), false),
  }),
  v.check(
    (body) => body.subject !== undefined || body.filter !== undefined || body.filters !== undefined,
    "a subject, a filter or filters: what to erase",
  ),
);

const RetentionBody = v.strictObject({
  /** List what the rules would remove, remove nothing. Default true. */
  dryRun: v.optional(v.boolean(), true),
});

/** Who asked, for the audit record: the admin key's hash, shortened (never the key). */
function actorOf(keyHash: string): string {
  return `admin key ${keyHash.slice(0, "sha256:".length + 12)}…`;
}

/** Adds the lifecycle routes to `app`. */
export function registerLifecycleRoutes(app: H3, ctx: LifecycleApiDeps): void {
  app.post("/events/erase", async (event) => {
    const keyHash = await requireAdmin(ctx, event.req);
    const { dryRun, ...selection } = await readJson(ctx, event.req, EraseBody);
    return eraseEvents(ctx, selection, { dryRun, actor: actorOf(keyHash) });
  });

  app.post("/events/retention", async (event) => {
    await requireAdmin(ctx, event.req);
    const body = await readJson(ctx, event.req, RetentionBody);
    return applyRetention(ctx.store, ctx.retention, ctx.clock.now(), { dryRun: body.dryRun });
  });
}
