/**
 * The ingress during `gateway backup`: while autocannon loads the gateway, a prober sends one
 * signed webhook at a time and records how long each answer took; `gateway backup` starts after
 * a window of the same load without it. The figure is the longest answer of a webhook sent while
 * the backup ran, next to the longest answer in the 3 s of the same load just before it.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type LoadRequest, runLoad } from "./autocannon-run.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const run = promisify(execFile);

export interface BackupProbeFigures {
  backup_ms: number;
  backup_kib: number;
  longest_answer_during_backup_ms: number;
  longest_answer_before_backup_ms: number;
  probes_during_backup: number;
  backup_non2xx: number;
  /** 1 when the autocannon load lasted the whole backup. */
  loaded_throughout: number;
}

/** Runs the load, the prober and the backup; `configPath` is the gateway's config, `outDir` where the copy goes. */
export async function probeDuringBackup(
  url: string,
  configPath: string,
  outDir: string,
  generate: () => LoadRequest,
  connections: number,
): Promise<BackupProbeFigures> {
  const probes: { start: number; ms: number; status: number }[] = [];
  let probing = true;
  const prober = (async () => {
    for (let i = 0; probing && i < 1_000_000; i++) {
      const request = generate();
      const start = performance.now();
      const response = await fetch(`${url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
      });
      await response.arrayBuffer();
      probes.push({ start, ms: performance.now() - start, status: response.status });
    }
  })();
  // 8 s of load: 3 s without the backup, then the backup (usually well under 5 s here).
  const load = runLoad(url, generate, { connections, durationSeconds: 8 });
  // A window of load without the backup, then the backup.
  const windowStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const backupStart = performance.now();
  const { stdout } = await run(process.execPath, [
    BIN,
    "backup",
    "--config",
    configPath,
    "--to",
    join(outDir, "bench-backup.db"),
  ]);
  const backupEnd = performance.now();
  const loadedThroughout = performance.now() - windowStart < 8000;
  probing = false;
  await prober;
  await load;
  const during = probes.filter((p) => p.start >= backupStart && p.start <= backupEnd);
  const before = probes.filter((p) => p.start >= windowStart && p.start < backupStart);
  const kib = Number(/(\d+) KiB/.exec(stdout)?.[1] ?? 0);
  return {
    backup_ms: Math.round(backupEnd - backupStart),
    backup_kib: kib,
    longest_answer_during_backup_ms: Math.round(Math.max(0, ...during.map((p) => p.ms)) * 10) / 10,
    longest_answer_before_backup_ms: Math.round(Math.max(0, ...before.map((p) => p.ms)) * 10) / 10,
    probes_during_backup: during.length,
    backup_non2xx: during.filter((p) => p.status !== 202).length,
    loaded_throughout: loadedThroughout ? 1 : 0,
  };
}
