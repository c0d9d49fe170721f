/**
 * The Node header lister (adapters/node/list-node-headers.ts) lists a real request's headers
 * exactly as iterating a Fetch `Headers` built from the same raw pairs does: lower-cased names,
 * repeated names joined by ", ", surrounding whitespace dropped. The webhook record keeps these
 * (redacted), so a difference would change what the event log shows.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { expect, test } from "vitest";
import { listNodeHeaders } from "../../adapters/node/list-node-headers.ts";
import { redactHeaders } from "../../src/ops/logger.ts";

async function receiveRaw(head: string): Promise<IncomingMessage> {
  let resolveReq: (req: IncomingMessage) => void = () => {};
  const received = new Promise<IncomingMessage>((resolve) => {
    resolveReq = resolve;
  });
  const server = createServer((req, res) => {
    resolveReq(req);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
  socket.write(head);
  const req = await received;
  socket.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return req;
}

test("a real request's headers are listed as Headers would list them", async () => {
  const req = await receiveRaw(
    [
      "POST /webhooks/esign HTTP/1.1",
      "Host: 127.0.0.1",
      "Content-Type: application/json",
      "X-Svc-Signature: sha256=abc",
      "X-Custom:   spaced value\t ",
      "Accept: text/plain",
      "accept: application/json",
      "Authorization: Bearer secret-token",
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n"),
  );
  const expected = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) expected.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const request = { runtime: { node: { req } } } as unknown as Request;
  const listed = listNodeHeaders(request);
  expect(listed).toEqual(Object.fromEntries(expected));
  expect(listed.accept).toBe("text/plain, application/json");
  expect(listed["x-custom"]).toBe("spaced value");

  const redacted = redactHeaders(listed);
  expect(redacted["x-svc-signature"]).toBe("[redacted]");
  expect(redacted.authorization).toBe("[redacted]");
  expect(JSON.stringify(redacted)).not.toContain("secret-token");
  expect(redacted).toEqual(redactHeaders(expected));
});

test("without a Node request behind, the Request's own Headers are listed", () => {
  const request = new Request("http://127.0.0.1/x", { headers: { "X-A": "1", "x-b": "2" } });
  expect(listNodeHeaders(request)).toEqual({ "x-a": "1", "x-b": "2" });
});
