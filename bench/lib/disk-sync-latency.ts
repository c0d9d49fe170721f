/**
 * The latency of one durable write on the benchmarks' temp filesystem: `count` rounds of a 4 KiB
 * write then `fdatasync` of a file in a fresh dir under the OS temp dir (where the gateway's
 * SQLite file, the glue's Redis AOF and the minimal receiver's WAL live). Receivers that wait for
 * a sync before answering are bound by it (the Express + Redis glue most: each request waits for
 * Redis' fsync), so the ingress case prints it to explain run-to-run moves of those rows.
 */
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function measureDiskSyncLatency(count = 100): Promise<{ p50Ms: number; p90Ms: number }> {
  const dir = await mkdtemp(join(tmpdir(), "gw-bench-sync-"));
  const file = await open(join(dir, "probe"), "w");
  const block = Buffer.alloc(4096, 1);
  const took: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      await file.write(block, 0, block.length, (i % 64) * 4096);
      const start = performance.now();
      await file.datasync();
      took.push(performance.now() - start);
    }
  } finally {
    await file.close();
    await rm(dir, { recursive: true, force: true });
  }
  took.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((took[Math.min(took.length - 1, Math.floor(took.length * q))] as number) * 100) / 100;
  return { p50Ms: at(0.5), p90Ms: at(0.9) };
}
