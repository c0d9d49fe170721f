/**
 * Who may read the event log, its deliveries and replay
 * (docs/ingress-and-verification.md#event-log-api): the admin API
 * key, or a client (API key or JWT) whose configuration grants `scopes.events`. A JWT may narrow
 * that grant with an `events: false` claim (the gateway's own stream tokens carry it) and is
 * refused when minted for another use (`token_use`). The web console reads the log this way.
 */
import { createGatewayError } from "../errors.ts";
import { type AdminAuthDeps, hashApiKey } from "./admin-auth.ts";
import { type ClientAuthenticator, readBearerCredential } from "./authenticate-client.ts";

/** What the events check needs: the admin key hashes, the crypto port and the client authenticator. */
export interface EventsAccessDeps extends AdminAuthDeps {
  clients: ClientAuthenticator;
}

const CREDENTIAL = /^[\x21-\x7e]{1,4096}$/;

function unauthorized() {
  return createGatewayError(
    401,
    "unauthorized",
    "an admin API key or a client credential with the events scope is required",
    {
      headers: { "www-authenticate": 'Bearer realm="gateway-admin"' },
    },
  );
}

/** Throws 401 without a valid credential, 403 for a client without the events scope. */
export async function requireEventsAccess(ctx: EventsAccessDeps, request: Request): Promise<void> {
  const credential = readBearerCredential(request, new URL(request.url));
  if (!credential || !CREDENTIAL.test(credential)) throw unauthorized();
  if (ctx.adminKeyHashes.has(await hashApiKey(credential, ctx))) return;
  const auth = await ctx.clients.authenticate(credential, "events");
  if (!auth.ok) throw unauthorized();
  const { client, claims } = auth.principal;
  if (client.scopes.events !== true || claims?.events === false) {
    throw createGatewayError(403, "forbidden", "this client may not read the event log", {
      details: { reason: "scope" },
    });
  }
}
