/**
 * A stream token handed to a browser must open the live stream and nothing else: the proxy
 * refuses it even though the client that minted it may call the proxy with its API key.
 */

import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

const API_KEY = "client-api-key-0123456789";
const JWT_SECRET = "jwt-secret-0123456789-0123456789-abcdef";

function makeGateway() {
  const config = resolveConfig(
    {
      store: { driver: "memory" },
      sources: [],
      upstreams: [
        { id: "staffing", service: "staffing", baseUrl: "http://127.0.0.1:9/api/public/v1", apiKey: "k".repeat(24) },
      ],
      destinations: [{ id: "live", type: "stream" }],
      routes: [{ destinations: ["live"] }],
      clients: [
        {
          id: "web",
          apiKeyHashes: [adminKeyHash(API_KEY)],
          scopes: { proxy: [{ upstream: "staffing" }], stream: {} },
        },
      ],
      auth: { jwt: { hs256Secret: JWT_SECRET } },
      log: { level: "silent" },
    },
    {},
  );
  return buildInProcessGateway({ config, resolved: true, logger: createLogger("silent") });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("token use", () => {
  it("refuses a minted stream token on the proxy while the client's API key passes authentication", async () => {
    const gateway = makeGateway();
    const minted = await gateway.fetch(
      new Request("http://gw.test/auth/stream-token", {
        method: "POST",
        headers: { ...bearer(API_KEY), "content-type": "application/json" },
        body: "{}",
      }),
    );
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()) as { token: string };

    const withToken = await gateway.fetch(new Request("http://gw.test/api/staffing/me", { headers: bearer(token) }));
    expect(withToken.status).toBe(401);
    expect(((await withToken.json()) as { error: { code: string } }).error.code).toBe("unauthorized");

    // The same client's API key gets past authentication (the upstream is unreachable: not a 401/403).
    const withKey = await gateway.fetch(new Request("http://gw.test/api/staffing/me", { headers: bearer(API_KEY) }));
    expect([401, 403]).not.toContain(withKey.status);
    await gateway.close();
  });

  it("accepts a plain client JWT (no token_use) on the proxy", async () => {
    const gateway = makeGateway();
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("web")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(JWT_SECRET));
    const response = await gateway.fetch(new Request("http://gw.test/api/staffing/me", { headers: bearer(jwt) }));
    expect([401, 403]).not.toContain(response.status);
    await gateway.close();
  });
});
