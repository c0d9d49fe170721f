/**
 * A 20 MB PDF through a real gateway process, both ways: the upload (`PUT .../documents/main`,
 * `application/pdf`) and the download arrive byte-identical (SHA-256), and the gateway streams
 * them with backpressure instead of holding them. Memory is checked where buffering would show:
 * with the far side paused mid-transfer, the gateway's resident set (sampled from /proc) must
 * grow by less than one 20 MB PDF while a 64 MB body waits to pass (a buffering gateway would take
 * all of it); then the far side resumes and the bytes are checked. The larger body keeps the
 * check clear of the few MB that loopback socket buffers and not-yet-collected chunks account for.
 * The upstream header timeout starts once the body is sent: a stalled upload outlives it (3 s).
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type EsignServer, startEsignEmulator } from "../helpers/emulators.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { fullClient, newKey, startProxyProcess } from "./proxy-fixtures.ts";

const SIZE = 20 * 1024 * 1024;
/** The body that waits behind a stalled side. */
const STALL_SIZE = 64 * 1024 * 1024;
/** Growth allowed while a transfer is stalled: less than one 20 MB PDF. */
const RSS_BOUND = SIZE;
/**
 * The upstream header timeout. It must be shorter than the stalled upload (which outlives it on
 * purpose) yet leave the emulator ample time to answer once a 64 MB body is through: it still
 * reads what the loopback socket buffers hold and copies the body into one buffer, in this test
 * process, next to the test's own hashing. On a loaded 2-core machine that took up to ~370 ms,
 * so 500 ms answered 504 now and then.
 */
const HEADER_TIMEOUT_MS = 3000;

let esign: EsignServer;
let gateway: GatewayProcess;
const key = newKey();
const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(SIZE - 9)]);
const pdfSha = createHash("sha256").update(pdf).digest("hex");
const bigPdf = Buffer.concat([pdf, pdf, pdf, pdf]).subarray(0, STALL_SIZE);
const bigPdfSha = createHash("sha256").update(bigPdf).digest("hex");

beforeAll(async () => {
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
  // A small replay limit keeps the buffered prefix out of the picture; a short header timeout
  // shows that it only starts once a streamed body has been sent.
  gateway = await startProxyProcess({
    esign,
    clients: [fullClient(key)],
    upstream: { replayBodyLimitBytes: 65_536, timeoutMs: HEADER_TIMEOUT_MS },
  });
});

afterAll(async () => {
  await gateway?.kill();
  await esign?.close();
});

async function rssOf(process: GatewayProcess): Promise<number> {
  const status = await readFile(`/proc/${process.child.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) * 1024;
}

/** A PDF as a pull-based stream (64 KiB per pull); `pushed` counts what the gateway took. */
function pdfStream(bytes: Buffer = pdf) {
  const progress = { pushed: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (progress.pushed >= bytes.byteLength) return controller.close();
      const end = Math.min(bytes.byteLength, progress.pushed + 65_536);
      controller.enqueue(bytes.subarray(progress.pushed, end));
      progress.pushed = end;
    },
  });
  return { stream, progress };
}

function upload(id: string, body: ReadableStream<Uint8Array>, size = SIZE) {
  return fetch(`${gateway.url}/api/esign/agreements/${id}/documents/main`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/pdf", "content-length": String(size) },
    body,
    duplex: "half",
  } as RequestInit);
}

async function sha256Of(body: ReadableStream<Uint8Array>): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
  return hash.digest("hex");
}

/**
 * Samples the gateway's RSS until `progress()` stops moving (the pipeline is full and stalled)
 * or `done()`; returns the largest growth over `base`. Bounded to ~10 s of samples.
 */
async function peakGrowthWhileStalled(base: number, progress: () => number, done: () => boolean) {
  let peak = 0;
  let last = -1;
  let still = 0;
  for (let i = 0; i < 500 && still < 15 && !done(); i++) {
    peak = Math.max(peak, (await rssOf(gateway)) - base);
    const now = progress();
    still = now === last ? still + 1 : 0;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return peak;
}

test("a 20 MB PDF uploads and downloads byte-identical, its length kept", async () => {
  const id = await esign.createAgreement();
  const answer = await upload(id, pdfStream().stream);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ ok: true });
  expect(await esign.documentHashes.get(id)).toBe(pdfSha);
  expect(esign.uploadHeaders.at(-1)?.["content-length"]).toBe(String(SIZE));
  expect(esign.uploadHeaders.at(-1)?.authorization).toBe(`Bearer ${esign.issued[0]}`);

  const download = await fetch(`${gateway.url}/api/esign/agreements/${id}/download`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(download.status).toBe(200);
  expect(download.headers.get("content-type")).toBe("application/pdf");
  expect(download.headers.get("content-length")).toBe(String(SIZE));
  expect(await sha256Of(download.body as ReadableStream<Uint8Array>)).toBe(pdfSha);
});

test("upload of 64 MB to a stalled upstream: the gateway grows by less than one 20 MB PDF, and does not time out", async () => {
  const id = await esign.createAgreement();
  const release = esign.holdUploads();
  const uploadsBefore = esign.uploadHeaders.length;
  const base = await rssOf(gateway);
  const { stream, progress } = pdfStream(bigPdf);
  const started = performance.now();
  const pending = upload(id, stream, STALL_SIZE);
  let growth: number;
  try {
    growth = await peakGrowthWhileStalled(
      base,
      () => progress.pushed,
      () => progress.pushed >= STALL_SIZE,
    );
    // Time passing, not synchronisation: the stalled upload outlives the header timeout.
    await new Promise((resolve) => setTimeout(resolve, HEADER_TIMEOUT_MS + 1000));
  } finally {
    release();
  }
  // The upload was in flight longer than the header timeout, so a timer started with the
  // request (not once the body is sent) would have answered 504.
  expect(performance.now() - started).toBeGreaterThan(HEADER_TIMEOUT_MS + 1000);
  expect(esign.uploadHeaders.length).toBe(uploadsBefore + 1);
  expect(progress.pushed).toBeLessThan(STALL_SIZE);
  expect(growth).toBeLessThan(RSS_BOUND);
  const answer = await pending;
  expect(answer.status).toBe(200);
  expect(await esign.documentHashes.get(id)).toBe(bigPdfSha);
});

test("download of 64 MB to a stalled client: the gateway grows by less than one 20 MB PDF", async () => {
  const id = await esign.createAgreement();
  expect((await upload(id, pdfStream(bigPdf).stream, STALL_SIZE)).status).toBe(200);
  const base = await rssOf(gateway);
  const sentBefore = esign.downloadSent();
  const download = await fetch(`${gateway.url}/api/esign/agreements/${id}/download`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const reader = (download.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  const growth = await peakGrowthWhileStalled(
    base,
    () => esign.downloadSent(),
    () => esign.downloadSent() - sentBefore >= STALL_SIZE,
  );
  expect(esign.downloadSent() - sentBefore).toBeLessThan(STALL_SIZE);
  expect(growth).toBeLessThan(RSS_BOUND);

  const hash = createHash("sha256").update(first.value ?? new Uint8Array());
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hash.update(value);
  }
  expect(hash.digest("hex")).toBe(bigPdfSha);
});
