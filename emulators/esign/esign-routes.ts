/**
 * The e-sign API surface in one place: the token endpoints, then every resource module, each
 * behind the bearer check (`Guard` of tokens.ts: authenticate, count against the general limit, check the scope).
 */
import { answer } from "../shared/emulator-frame.ts";
import type { WebhookSender } from "../shared/webhook-sender.ts";
import { addAccountRoutes } from "./account-extras.ts";
import { addAgreementRoutes } from "./agreements.ts";
import { addConversationRoutes } from "./conversation.ts";
import { addDocumentRoutes } from "./documents.ts";
import type { EsignClient, EsignContext } from "./esign-context.ts";
import { addParticipantRoutes } from "./participants.ts";
import { addSigningSimulation } from "./signing-simulation.ts";
import { createTokens, type Guard, requireScope } from "./tokens.ts";
import { addWebhooks } from "./webhooks.ts";

/** Adds every e-sign route to the context's app; returns the handles the emulator exposes. */
export function addEsignRoutes(ctx: EsignContext, clients: EsignClient[], sender: WebhookSender) {
  const tokens = createTokens(ctx, clients);
  const guard: Guard = async (event, scope) => {
    const caller = await tokens.authenticate(event);
    if (scope) requireScope(caller, scope);
    return caller;
  };
  const { app, api } = ctx.frame;
  app.post(`${api}/oauth/access-token`, tokens.issue);
  app.delete(`${api}/oauth/access-token`, tokens.revoke);
  addAgreementRoutes(ctx, guard);
  addParticipantRoutes(ctx, guard);
  const documents = addDocumentRoutes(ctx, guard);
  addConversationRoutes(ctx, guard);
  const webhooks = addWebhooks(ctx, guard, sender);
  addAccountRoutes(ctx, guard, clients);
  addSigningSimulation(ctx);
  // Authenticate before answering an unknown path, like the rest of the API.
  app.all(
    `${api}/**`,
    answer(async (event) => {
      await guard(event);
      return new Response(JSON.stringify({ error: { code: "not_found", message: "no such endpoint" } }), {
        status: 404,
        headers: { "content-type": "application/json" },
      });
    }),
  );
  return { tokens, documents, webhooks };
}
