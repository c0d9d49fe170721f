/**
 * Issue 12 rows 6 and 7 against a real gateway process: a refused WebSocket upgrade whose client
 * ignores the close frame loses its socket within about a second; `/metrics` needs an allowed
 * address or a token, `/healthz` answers only `{"ok":…}` to others, and it reports 503 while the
 * disk refuses journal writes (a file size limit set on the running process with `prlimit`).
 */
import { execFile } from "node:child_process";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { promisify } from "node:util";
import { afterEach, expect, test } from "vitest";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery } from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "../ingress/gateway-fixtures.ts";
import { hashKey, newKey } from "../proxy/proxy-fixtures.ts";

const running: GatewayProcess[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.kill();
});

function get(gateway: GatewayProcess, path: string, localAddress: string, headers: Record<string, string> = {}) {
  const url = new URL(gateway.url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    httpRequest({ host: url.hostname, port: url.port, path, localAddress, headers, agent: false }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on("error", reject)
      .end();
  });
}

test("row 6: refused upgrades that ignore the close frame are cut within seconds", async () => {
  const gateway = await startEditedGatewayProcess((config) => {
    Object.assign(config, { destinations: [{ id: "live", type: "stream" }] });
  });
  running.push(gateway);
  const url = new URL(gateway.url);
  const started = Date.now();
  const closed = Array.from(
    { length: 20 },
    () =>
      new Promise<string>((resolve) => {
        const socket = connect({ port: Number(url.port), host: url.hostname });
        let head = "";
        socket.on("data", (data) => {
          head += data.toString("latin1");
        });
        socket.on("error", () => {});
        socket.on("close", () => resolve(head.slice(0, 12)));
        // A handshake without credentials; the client never answers the close frame.
        socket.write(
          `GET /ws HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        );
      }),
  );
  const heads = await Promise.race([
    Promise.all(closed),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000).unref()),
  ]);
  expect(heads).toBeDefined();
  for (const head of heads ?? []) expect(head).toBe("HTTP/1.1 101");
  // Before: each socket was held for the WebSocket library's 30 s close timeout. Now the cut
  // comes 1 s after the close frame; 5 s leaves room for a loaded 2-core machine.
  expect(Date.now() - started).toBeLessThan(5_000);
});

test("row 7: /metrics and the details of /healthz need an allowed address or a token; disk full is 503", async () => {
  const token = newKey("metrics");
  const gateway = await startEditedGatewayProcess((config) => {
    Object.assign(config, { metrics: { bearerTokenHashes: [hashKey(token)] } });
  });
  running.push(gateway);

  expect((await get(gateway, "/metrics", "127.0.0.2")).status).toBe(401);
  const withToken = await get(gateway, "/metrics", "127.0.0.2", { authorization: `bearer ${token}` });
  expect(withToken.status).toBe(200);
  expect(withToken.body).toContain("gateway_webhooks_accepted_total");
  expect((await get(gateway, "/metrics", "127.0.0.1")).status).toBe(200);
  const minimal = await get(gateway, "/healthz", "127.0.0.2");
  expect(minimal.status).toBe(200);
  expect(JSON.parse(minimal.body)).toEqual({ ok: true });
  expect(JSON.parse((await get(gateway, "/healthz", "127.0.0.1")).body).sources).toEqual(["esign", "staffing"]);

  // Disk full: no write past byte 1 of any file (SQLite rewinds its WAL, so capping at the
  // current size would not stop its writes; see test/security/outbox-disk-full.test.ts).
  await promisify(execFile)("prlimit", [`--pid=${gateway.child.pid}`, "--fsize=1:"]);
  const post = async () => {
    const delivery = await esignDelivery(gateway.secrets.esign, "agreement.completed", {
      edit: (body) => {
        body.padding = "x".repeat(4096);
      },
    });
    return fetch(`${gateway.url}/webhooks/esign`, {
      method: "POST",
      headers: delivery.headers,
      body: Buffer.from(delivery.body),
    });
  };
  expect((await post()).status).toBe(503);
  const full = await get(gateway, "/healthz", "127.0.0.2");
  expect(full.status).toBe(503);
  expect(JSON.parse(full.body)).toEqual({ ok: false });
  const detailed = JSON.parse((await get(gateway, "/healthz", "127.0.0.1")).body);
  expect(detailed.store.writable).toBe(false);

  await promisify(execFile)("prlimit", [`--pid=${gateway.child.pid}`, "--fsize=unlimited:"]);
  expect((await post()).status).toBe(202);
  expect((await get(gateway, "/healthz", "127.0.0.2")).status).toBe(200);
});
