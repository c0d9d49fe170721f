/**
 * Issue 12 row 5, the gateway's own tokens: with `auth.jwt.maxLifetimeSeconds` below the stream
 * token lifetimes, `POST /auth/stream-token` mints tokens within the maximum (the default
 * shortened, a longer request refused), so the gateway never hands out a token it would refuse.
 */
import { randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import { afterEach, expect, test } from "vitest";
import type { Gateway } from "../../src/create-gateway.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

const key = `ui_${randomBytes(12).toString("hex")}`;
const open: Gateway[] = [];
afterEach(async () => {
  for (const gateway of open.splice(0)) await gateway.close();
});

function build(): Gateway {
  const gateway = buildInProcessGateway({
    config: {
      sources: [],
      clients: [{ id: "ui", apiKeyHashes: [adminKeyHash(key)], scopes: { stream: {} } }],
      auth: { jwt: { hs256Secret: randomBytes(32).toString("hex"), maxLifetimeSeconds: 120 } },
      destinations: [{ id: "live", type: "stream" }],
      log: { level: "silent" },
    },
  });
  open.push(gateway);
  return gateway;
}

function mint(gateway: Gateway, body: unknown) {
  return gateway.fetch(
    new Request("http://gateway.test/auth/stream-token", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

test("the default stream token lifetime is cut to the maximum, and the token is accepted", async () => {
  const gateway = build();
  const response = await mint(gateway, {});
  expect(response.status).toBe(201);
  const body = await response.json();
  expect(body.expiresIn).toBe(120);
  const claims = decodeJwt(body.token);
  expect((claims.exp as number) - (claims.iat as number)).toBe(120);
  expect((await gateway.ctx.clients.authenticate(body.token, "stream")).ok).toBe(true);
});

test("a stream token asked for longer than the maximum is refused with 400", async () => {
  const response = await mint(build(), { ttlSeconds: 300 });
  expect(response.status).toBe(400);
  expect((await response.json()).error).toMatchObject({
    code: "invalid_request",
    message: "ttlSeconds may be at most 120",
  });
});
