/**
 * The account-level endpoints beyond agreements (esign reference, API clients, Agreement
 * templates and generations, Sub-accounts). API clients are emulated in full (`client_secret`
 * shown once, revoke). The emulated account has neither the agreement module nor a sub-account
 * licence, so those endpoints answer as the reference documents for such an account:
 * 402 `plan_required` with `upgrade_url`, and 403 `license_required`.
 */
import * as v from "valibot";
import { answer, param } from "../shared/emulator-frame.ts";
import { randomSecret } from "../shared/hmac.ts";
import { errorAnswer, fail, json, readJsonObject } from "../shared/http-answers.ts";
import { parseOrFail, text } from "../shared/validation.ts";
import type { EsignClient, EsignContext } from "./esign-context.ts";
import { isoNow } from "./esign-context.ts";
import type { Guard } from "./tokens.ts";

const NewClient = v.object({
  name: text(1, 120),
  scopes: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(20))),
});

interface ClientRecord {
  id: string;
  client_id: string;
  name: string;
  status: "active" | "revoked";
  scopes: string[];
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** Adds /clients, and the plan- and licence-gated endpoints. */
export function addAccountRoutes(ctx: EsignContext, guard: Guard, clients: EsignClient[]): void {
  const { app, api } = ctx.frame;
  const records: ClientRecord[] = clients.map((c) => ({
    id: crypto.randomUUID(),
    client_id: c.clientId,
    name: c.name ?? "Emulator client",
    status: "active",
    scopes: c.scopes,
    last_used_at: null,
    created_at: isoNow(ctx),
    revoked_at: null,
  }));

  app.get(
    `${api}/clients`,
    answer(async (event) => {
      await guard(event, "clients:manage");
      return json(200, { clients: records });
    }),
  );
  app.post(
    `${api}/clients`,
    answer(async (event) => {
      await guard(event, "clients:manage");
      const input = parseOrFail(NewClient, await readJsonObject(event.req), "client");
      if (records.length >= 100) fail(409, "conflict", "at most 100 API clients in the emulator");
      // Scopes granted when none are requested are not shown in the reference: none.
      const record: ClientRecord = {
        id: crypto.randomUUID(),
        client_id: `cid_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`,
        name: input.name,
        status: "active",
        scopes: input.scopes ?? [],
        last_used_at: null,
        created_at: isoNow(ctx),
        revoked_at: null,
      };
      const secret = randomSecret("cs_");
      records.push(record);
      clients.push({ clientId: record.client_id, clientSecret: secret, scopes: record.scopes, name: record.name });
      return json(201, { ...record, client_secret: secret });
    }),
  );
  app.post(
    `${api}/clients/:id/revoke`,
    answer(async (event) => {
      await guard(event, "clients:manage");
      const record = records.find((r) => r.id === param(event, "id"));
      if (!record) fail(404, "not_found", "client not found");
      record.status = "revoked";
      record.revoked_at = isoNow(ctx);
      const index = clients.findIndex((c) => c.clientId === record.client_id);
      if (index >= 0) clients.splice(index, 1);
      return json(200, { ok: true });
    }),
  );

  const planRequired = answer(async (event) => {
    await guard(event);
    return errorAnswer(402, "plan_required", "the agreement module is not active on this account", {
      upgrade_url: `${event.url.origin}${ctx.frame.control}/upgrade`,
    });
  });
  for (const path of [
    "/agreement-templates",
    "/agreement-templates/**",
    "/agreement-generations",
    "/agreement-generations/**",
  ]) {
    app.all(`${api}${path}`, planRequired);
  }
  const licenceRequired = answer(async (event) => {
    await guard(event);
    return errorAnswer(403, "license_required", "no active sub-account licence on the main account");
  });
  app.all(`${api}/sub-accounts`, licenceRequired);
  app.all(`${api}/sub-accounts/**`, licenceRequired);
}
