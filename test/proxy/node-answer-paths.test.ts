/**
 * The two ways the Node adapter hands an upstream answer to the client (adapters/node/
 * node-upstream-fetch.ts), through a real gateway process: a small answer with a declared length
 * is read whole and written as one buffer, a larger one (or one without a declared length, as the
 * e-sign emulator sends its JSON) is piped as undici's Node stream. Both keep status, headers and
 * bytes; a client that goes away before or in the middle of a streamed
 * answer leaves the gateway serving (undici reports the dropped stream as an 'error' event, which
 * must not be uncaught).
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type EsignServer, type StaffingServer, startEsignEmulator } from "../helpers/emulators.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { fullClient, newKey, startProxyProcess } from "./proxy-fixtures.ts";

let esign: EsignServer;
let gateway: GatewayProcess;
const key = newKey();
const auth = { authorization: `Bearer ${key}` };

/** A small JSON answer with a declared length, from the local upstream. */
const SMALL_JSON = JSON.stringify({ id: "small-1", title: "small answer", padding: "x".repeat(512) });

/**
 * An upstream (in the staffing slot): `/small` answers SMALL_JSON with its length declared; any
 * other path sends the headers of a large answer, then holds the body.
 */
const held: ServerResponse[] = [];
let requestsSeen = 0;
const stalling = createServer((req, res) => {
  req.resume();
  if (req.url?.endsWith("/small")) {
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(SMALL_JSON)),
    });
    res.end(SMALL_JSON);
    return;
  }
  requestsSeen++;
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(1024 * 1024) });
  res.flushHeaders();
  held.push(res);
});

beforeAll(async () => {
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  await new Promise<void>((resolve) => stalling.listen(0, "127.0.0.1", resolve));
  const staffing = {
    baseUrl: `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`,
    apiKey: "stalling-upstream-key",
  } as unknown as StaffingServer;
  gateway = await startProxyProcess({ esign, staffing, clients: [fullClient(key)] });
});

afterAll(async () => {
  await gateway?.kill();
  await esign?.close();
  for (const res of held) res.destroy();
  stalling.closeAllConnections();
  await new Promise<void>((resolve) => stalling.close(() => resolve()));
});

async function uploadDocument(id: string, bytes: Buffer) {
  const answer = await fetch(`${gateway.url}/api/esign/agreements/${id}/documents/main`, {
    method: "PUT",
    headers: { ...auth, "content-type": "application/pdf" },
    body: new Uint8Array(bytes),
  });
  expect(answer.status).toBe(200);
  await answer.arrayBuffer();
}

test("a small answer arrives whole: status, declared length, content type, request id and bytes", async () => {
  const answer = await fetch(`${gateway.url}/api/staffing/small`, {
    headers: { ...auth, "x-request-id": "rid-small-1" },
  });
  const bytes = Buffer.from(await answer.arrayBuffer());
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  expect(answer.headers.get("content-length")).toBe(String(Buffer.byteLength(SMALL_JSON)));
  expect(answer.headers.get("x-request-id")).toBe("rid-small-1");
  expect(bytes.toString("utf8")).toBe(SMALL_JSON);

  const missing = await fetch(`${gateway.url}/api/esign/agreements/agr_missing`, { headers: auth });
  expect(missing.status).toBe(404);
  expect(await missing.json()).toMatchObject({ error: { code: "not_found" } });
});

test("an answer without a declared length arrives whole: status, content type, request id and bytes", async () => {
  const id = await esign.createAgreement("undeclared length");
  const answer = await fetch(`${gateway.url}/api/esign/agreements/${id}`, {
    headers: { ...auth, "x-request-id": "rid-chunked-1" },
  });
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  expect(answer.headers.get("x-request-id")).toBe("rid-chunked-1");
  expect(await answer.json()).toMatchObject({ id, title: "undeclared length" });
});

test("a streamed answer keeps its bytes; a client gone mid-answer leaves the gateway serving", async () => {
  const id = await esign.createAgreement("streamed answer");
  const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(4 * 1024 * 1024)]);
  await uploadDocument(id, pdf);

  const whole = await fetch(`${gateway.url}/api/esign/agreements/${id}/download`, { headers: auth });
  expect(whole.status).toBe(200);
  expect(whole.headers.get("content-length")).toBe(String(pdf.byteLength));
  const got = createHash("sha256")
    .update(Buffer.from(await whole.arrayBuffer()))
    .digest("hex");
  expect(got).toBe(createHash("sha256").update(pdf).digest("hex"));

  for (let i = 0; i < 3; i++) {
    const reader = new AbortController();
    const partial = await fetch(`${gateway.url}/api/esign/agreements/${id}/download`, {
      headers: auth,
      signal: reader.signal,
    });
    const stream = (partial.body as ReadableStream<Uint8Array>).getReader();
    expect((await stream.read()).done).toBe(false);
    reader.abort();
    await stream.closed.catch(() => {});
  }

  const after = await fetch(`${gateway.url}/api/esign/agreements/${id}`, { headers: auth });
  expect(after.status).toBe(200);
  await after.arrayBuffer();
  expect(gateway.child.exitCode).toBeNull();
});

test("a client gone before a streamed answer's first byte leaves the gateway serving", async () => {
  const before = requestsSeen;
  const reader = new AbortController();
  const pending = fetch(`${gateway.url}/api/staffing/exports/big`, { headers: auth, signal: reader.signal });
  for (let i = 0; i < 500 && requestsSeen === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(requestsSeen).toBe(before + 1);
  reader.abort();
  await expect(pending).rejects.toThrow();
  // The upstream's body never came: the gateway dropped it when the client left. It still serves.
  for (let i = 0; i < 3; i++) {
    const id = await esign.createAgreement("after a gone client");
    const after = await fetch(`${gateway.url}/api/esign/agreements/${id}`, { headers: auth });
    expect(after.status).toBe(200);
    await after.arrayBuffer();
  }
  expect(gateway.child.exitCode).toBeNull();
});
