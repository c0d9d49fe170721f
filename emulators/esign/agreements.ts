/**
 * Agreement endpoints (esign reference, Endpoints > Agreements and States and transitions):
 * list with `external_id`, `external_source`, `status`, `limit` (1-200, default 50), `group`
 * (`latest` hides superseded versions) and `cursor`; create with `Idempotency-Key` (max 80
 * chars, replay for 24 h with `Idempotent-Replayed: true`, 409 `conflict` on a different body)
 * and version chains by `external_source` + `external_id`; get; patch (409 on terminal
 * statuses, `sender` and the eid options only while draft); delete of drafts; versions.
 */
import { answer, param } from "../shared/emulator-frame.ts";
import { fail, json, parseJsonObject, readBytes, readJsonObject } from "../shared/http-answers.ts";
import { createIdempotencyCache } from "../shared/idempotency.ts";
import { parseOrFail } from "../shared/validation.ts";
import { CreateAgreement, ListQuery, PatchAgreement } from "./agreement-schemas.ts";
import { type EsignContext, findAgreement, recordAudit, touch } from "./esign-context.ts";
import { TERMINAL_STATUSES } from "./esign-types.ts";
import { chainKey, chainVersions, presentAgreement } from "./present-agreement.ts";
import type { Guard } from "./tokens.ts";
import { createVersion } from "./version-chain.ts";

/** Adds the agreement collection and item routes. */
export function addAgreementRoutes(ctx: EsignContext, guard: Guard): void {
  const { app, api } = ctx.frame;
  const idempotency = createIdempotencyCache(() => ctx.scheduler.now());

  app.get(
    `${api}/agreements`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const query = parseOrFail(ListQuery, Object.fromEntries(event.url.searchParams), "query");
      let list = [...ctx.agreements.values()].reverse();
      if ((query.group ?? "latest") === "latest") list = list.filter((a) => a.superseded_at === null);
      if (query.external_id !== undefined) list = list.filter((a) => a.external_id === query.external_id);
      if (query.external_source !== undefined) list = list.filter((a) => a.external_source === query.external_source);
      if (query.status) list = list.filter((a) => a.status === query.status);
      let start = 0;
      if (query.cursor !== undefined) {
        start = list.findIndex((a) => a.id === query.cursor) + 1;
        if (start === 0) fail(400, "invalid_request", "unknown cursor");
      }
      const limit = query.limit ?? 50;
      const page = list.slice(start, start + limit);
      const more = start + limit < list.length;
      return json(200, {
        agreements: page.map((a) => presentAgreement(ctx, a)),
        next_cursor: more ? (page.at(-1)?.id ?? null) : null,
      });
    }),
  );

  app.post(
    `${api}/agreements`,
    answer(async (event) => {
      const caller = await guard(event, "agreements:create");
      const key = event.req.headers.get("idempotency-key");
      if (key !== null && (key.length < 1 || key.length > 80)) {
        fail(400, "invalid_request", "Idempotency-Key must be 1 to 80 characters");
      }
      const raw = await readBytes(event.req, 1024 * 1024);
      const lookup = key === null ? undefined : await idempotency.lookup(caller.clientId, key, raw);
      if (lookup?.kind === "conflict") fail(409, "conflict", "Idempotency-Key reused with a different body");
      if (lookup?.kind === "replay") return json(lookup.status, lookup.body, { "idempotent-replayed": "true" });
      const input = parseOrFail(CreateAgreement, parseJsonObject(raw), "agreement");
      if (input.completed_delivery === "email_attachment" && ctx.options.account?.alwaysSecureDelivery) {
        fail(409, "secure_delivery_enforced", "the account always requires secure delivery");
      }
      const agreement = await createVersion(ctx, input, event.url.origin);
      const body = presentAgreement(ctx, agreement);
      if (lookup?.kind === "new") lookup.remember(201, body);
      return json(201, body);
    }),
  );

  app.get(
    `${api}/agreements/:id`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      return json(200, presentAgreement(ctx, findAgreement(ctx, param(event, "id"))));
    }),
  );

  app.patch(
    `${api}/agreements/:id`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      const input = parseOrFail(PatchAgreement, await readJsonObject(event.req), "agreement patch");
      if (TERMINAL_STATUSES.includes(agreement.status)) {
        fail(409, "conflict", `agreement is ${agreement.status} and can no longer be changed`);
      }
      const draftOnly = ["sender", "eid_required", "eid_identify_required"] as const;
      for (const field of draftOnly) {
        if (input[field] !== undefined && agreement.status !== "draft") {
          fail(409, "conflict", `${field} can only be changed while the agreement is a draft`);
        }
      }
      if (input.title !== undefined) agreement.title = input.title;
      if (input.message !== undefined) agreement.message = input.message;
      if (input.callback_url !== undefined) {
        agreement.callback_url = input.callback_url;
      }
      if (input.external_url !== undefined) agreement.external_url = input.external_url;
      if (input.metadata !== undefined) agreement.metadata = input.metadata;
      if (input.sender !== undefined) {
        agreement.sender = input.sender ? { name: input.sender.name ?? null, email: input.sender.email } : null;
      }
      if (input.eid_required !== undefined) agreement.eid_required = input.eid_required;
      if (input.eid_identify_required !== undefined) agreement.eid_identify_required = input.eid_identify_required;
      const reminders = input.auto_reminders;
      if (reminders?.enabled !== undefined) agreement.auto_reminders_enabled = reminders.enabled;
      if (reminders?.interval_days !== undefined) agreement.reminder_interval_days = reminders.interval_days;
      if (reminders?.max_reminders !== undefined) agreement.max_reminders = reminders.max_reminders;
      touch(ctx, agreement);
      recordAudit(ctx, agreement, "agreement.updated", { fields: Object.keys(input) });
      return json(200, presentAgreement(ctx, agreement));
    }),
  );

  app.delete(
    `${api}/agreements/:id`,
    answer(async (event) => {
      await guard(event, "agreements:create");
      const agreement = findAgreement(ctx, param(event, "id"));
      // Documented for drafts only; anything else has a history to keep, so it is a conflict.
      if (agreement.status !== "draft")
        fail(409, "conflict", `only drafts can be deleted (status ${agreement.status})`);
      ctx.agreements.delete(agreement.id);
      const key = chainKey(agreement);
      const chain = key ? ctx.chains.get(key) : undefined;
      if (key && chain) {
        const rest = chain.filter((id) => id !== agreement.id);
        if (rest.length > 0) ctx.chains.set(key, rest);
        else ctx.chains.delete(key);
      }
      return new Response(null, { status: 204 });
    }),
  );

  app.get(
    `${api}/agreements/:id/versions`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const agreement = findAgreement(ctx, param(event, "id"));
      const versions = chainVersions(ctx, agreement) ?? [
        {
          id: agreement.id,
          version: agreement.version,
          status: agreement.status,
          created_at: agreement.created_at,
          is_current: agreement.superseded_at === null,
        },
      ];
      return json(200, { agreement_id: agreement.id, versions });
    }),
  );
}
