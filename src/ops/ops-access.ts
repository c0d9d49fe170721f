/**
 * Who may read `/metrics` and the details of `/healthz`
 * (docs/security-and-deployment.md#what-protects-what): a client address in
 * `metrics.allowAddresses` (default loopback), a bearer token whose hash is in
 * `metrics.bearerTokenHashes`, or an admin API key. Others get 401 on `/metrics` and only
 * `{"ok":…}` on `/healthz`: source, destination and upstream ids, traffic and breaker states
 * tell an attacker what to aim at.
 */
import { type AdminAuthDeps, hashApiKey } from "../auth/admin-auth.ts";
import { readBearerCredential } from "../auth/authenticate-client.ts";
import type { GatewayConfig } from "../config/schema.ts";
import { createGatewayError } from "../errors.ts";
import { clientAddressOf, normalizeAddress } from "../http/client-address.ts";

/** What the operator check needs: the metrics access settings, the admin key hashes, the crypto port. */
export interface OpsAccessDeps extends AdminAuthDeps {
  config: { metrics: Pick<GatewayConfig["metrics"], "allowAddresses" | "bearerTokenHashes"> };
}

const CREDENTIAL = /^[\x21-\x7e]{1,512}$/;

/** True when `request` may read operational details. */
export async function mayReadOpsDetails(ctx: OpsAccessDeps, request: Request): Promise<boolean> {
  const address = clientAddressOf(request);
  const { allowAddresses, bearerTokenHashes } = ctx.config.metrics;
  if (
    address !== undefined &&
    allowAddresses.some((allowed) => normalizeAddress(allowed) === normalizeAddress(address))
  ) {
    return true;
  }
  const credential = readBearerCredential(request, new URL(request.url));
  if (!credential || !CREDENTIAL.test(credential)) return false;
  const hash = await hashApiKey(credential, ctx);
  return bearerTokenHashes.includes(hash) || ctx.adminKeyHashes.has(hash);
}

/** Throws 401 unless `request` may read `/metrics`. */
export async function requireOpsAccess(ctx: OpsAccessDeps, request: Request): Promise<void> {
  if (await mayReadOpsDetails(ctx, request)) return;
  throw createGatewayError(401, "unauthorized", "metrics need a token or an allowed address", {
    headers: { "www-authenticate": 'Bearer realm="gateway-metrics"' },
  });
}
