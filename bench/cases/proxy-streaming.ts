/**
 * Large bodies through the proxy (part of `npm run bench -- proxy`): a 64 MB PDF uploaded
 * (`PUT /agreements/{id}/documents/main`) and downloaded (`GET /agreements/{id}/download`)
 * directly, through the gateway and through the node-http-proxy peer, in the same run. Prints
 * MB/s of each (best of three), the ratio gateway/direct (target >= 0.9) and the gateway's peak
 * RSS growth while the bodies pass (bounded memory: well under one body).
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";

const SIZE = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;
const ROUNDS = 3;

export interface StreamingTarget {
  label: string;
  /** Base URL up to and including the API root (`.../api/public/v1` or `.../api/esign`). */
  apiUrl: string;
  authorization: string;
}

/** MB/s of one upload of `body`, streamed in 64 KiB writes with backpressure. */
function uploadOnce(target: StreamingTarget, id: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      `${target.apiUrl}/agreements/${id}/documents/main`,
      {
        method: "PUT",
        agent: false,
        headers: {
          authorization: target.authorization,
          "content-type": "application/pdf",
          "content-length": String(body.byteLength),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`${target.label} upload answered ${res.statusCode}`));
          resolve(body.byteLength / 1e6 / ((performance.now() - started) / 1000));
        });
      },
    );
    req.on("error", reject);
    let offset = 0;
    const pump = () => {
      while (offset < body.byteLength) {
        const end = Math.min(body.byteLength, offset + CHUNK);
        const more = req.write(body.subarray(offset, end));
        offset = end;
        if (!more) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

/** MB/s of one download, checking its length. */
function downloadOnce(target: StreamingTarget, id: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http
      .get(
        `${target.apiUrl}/agreements/${id}/download`,
        { agent: false, headers: { authorization: target.authorization } },
        (res) => {
          let bytes = 0;
          res.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
          });
          res.on("end", () => {
            if (res.statusCode !== 200 || bytes !== SIZE)
              return reject(new Error(`${target.label} download: ${res.statusCode}, ${bytes} bytes`));
            resolve(SIZE / 1e6 / ((performance.now() - started) / 1000));
          });
        },
      )
      .on("error", reject);
  });
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

/** Runs `work` while sampling the RSS of `pid` every 20 ms; returns its result and the peak growth. */
async function withPeakRss<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peakGrowth: number }> {
  const base = await rssOf(pid);
  let peak = base;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await rssOf(pid));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    const result = await work();
    return { result, peakGrowth: peak - base };
  } finally {
    running = false;
    await sampler;
  }
}

/** Best of ROUNDS upload and download rates per target; `agreementId` is a draft agreement. */
export async function benchLargeBodies(targets: StreamingTarget[], agreementId: string, gatewayPid: number) {
  const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(SIZE - 9)]);
  const rates: Record<string, { upload: number; download: number }> = {};
  let peakGrowth = 0;
  for (const target of targets) {
    let upload = 0;
    let download = 0;
    const run = async () => {
      for (let round = 0; round < ROUNDS; round++) {
        upload = Math.max(upload, await uploadOnce(target, agreementId, pdf));
        download = Math.max(download, await downloadOnce(target, agreementId));
      }
    };
    if (target.label === "gateway") peakGrowth = (await withPeakRss(gatewayPid, run)).peakGrowth;
    else await run();
    rates[target.label] = { upload: Math.round(upload), download: Math.round(download) };
  }
  return { rates, peakGrowthMb: Math.round(peakGrowth / 1024 / 1024), sizeMb: SIZE / 1024 / 1024 };
}
