/**
 * The staged close after a refused webhook body
 * (docs/security-and-deployment.md#what-protects-what, adapters/node/
 * linger-after-refusal.ts) against a real gateway process: a client that keeps writing after
 * its 413 still reads the answer, and the gateway does not read the rest for ever: it closes the
 * connection once it has thrown away its bound (64 MiB), however long the client goes on.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { LINGER_BYTES } from "../../adapters/node/linger-after-refusal.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery } from "../helpers/signed-requests.ts";
import { startGatewayWithTinySource } from "../ingress/gateway-fixtures.ts";

let gw: GatewayProcess;
beforeAll(async () => {
  gw = await startGatewayWithTinySource();
});
afterAll(async () => {
  await gw.kill();
});

test("a client writing on after its 413 reads the answer, and is cut off after a bounded amount", async () => {
  const delivery = await esignDelivery(gw.secrets.esign);
  const target = new URL(`${gw.url}/webhooks/tiny`);
  // Half-open allowed: the client goes on writing after the gateway's FIN, as a hostile one would.
  const socket = connect({ port: Number(target.port), host: target.hostname, allowHalfOpen: true });
  let received = "";
  socket.on("data", (data: Buffer) => {
    received += data.toString("latin1");
  });
  let closed = false;
  socket.on("error", () => {});
  socket.once("close", () => {
    closed = true;
  });
  const head = [`POST ${target.pathname} HTTP/1.1`, `Host: ${target.host}`, "Transfer-Encoding: chunked"];
  for (const [name, value] of Object.entries(delivery.headers)) head.push(`${name}: ${value}`);
  socket.write(`${head.join("\r\n")}\r\n\r\n`);

  const piece = Buffer.concat([Buffer.from("10000\r\n"), Buffer.alloc(65_536, 0x20), Buffer.from("\r\n")]);
  let sent = 0;
  // Bounded: three times the gateway's bound at most (it is LINGER_BYTES after the answer, plus
  // what the sockets buffer).
  for (let i = 0; i < (3 * LINGER_BYTES) / 65_536 && !closed; i++) {
    await new Promise<void>((resolve) => socket.write(piece, () => resolve()));
    sent += 65_536;
    // A yield to I/O so the close is seen, not a timed wait.
    await new Promise((resolve) => setImmediate(resolve));
  }
  socket.destroy();
  expect(closed).toBe(true);
  // LINGER_BYTES read after the answer, plus what the two sockets buffer on loopback (Linux
  // autotunes them to at most 32 + 4 MiB).
  expect(sent).toBeLessThan(LINGER_BYTES + 40 * 1024 * 1024);
  expect(received).toMatch(/^HTTP\/1\.1 413 /);
  expect(received.toLowerCase()).toContain("connection: close");
  expect(received).toContain('"payload_too_large"');
});
