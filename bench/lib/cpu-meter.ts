/**
 * CPU time of benchmark processes, so a reader sees when the load generator, not the server, was
 * the limit: each spawned process from /proc/<pid>/stat (utime + stime), this process (the load
 * generator) from `process.cpuUsage()`.
 */
import { readFile } from "node:fs/promises";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds used so far by process `pid` (all its threads). */
export async function cpuSecondsOf(pid: number): Promise<number> {
  return ticksOf(`/proc/${pid}/stat`);
}

/**
 * CPU seconds used so far by the main thread of process `pid` (the event loop; Node's thread
 * pool, worker threads and V8's helper threads excluded): the thread whose id is the pid.
 */
export async function mainThreadCpuSecondsOf(pid: number): Promise<number> {
  return ticksOf(`/proc/${pid}/task/${pid}/stat`);
}

async function ticksOf(path: string): Promise<number> {
  const stat = await readFile(path, "utf8");
  // Fields after the command name (which may contain spaces) start after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * Runs `work` and returns its result with the CPU used meanwhile by each named process and by
 * the load generator, as a share of one core over the wall time (100 = one core busy).
 */
export async function withCpu<T>(
  processes: Record<string, number | undefined>,
  work: () => Promise<T>,
): Promise<{ result: T; cpuPercent: Record<string, number> }> {
  const started = performance.now();
  const own = process.cpuUsage();
  const before: Record<string, number> = {};
  for (const [name, pid] of Object.entries(processes)) if (pid) before[name] = await cpuSecondsOf(pid);
  const result = await work();
  const wall = (performance.now() - started) / 1000;
  const cpuPercent: Record<string, number> = {};
  for (const [name, pid] of Object.entries(processes)) {
    if (!pid || before[name] === undefined) continue;
    cpuPercent[name] = Math.round((((await cpuSecondsOf(pid)) - before[name]) / wall) * 100);
  }
  const used = process.cpuUsage(own);
  cpuPercent["load generator"] = Math.round(((used.user + used.system) / 1e6 / wall) * 100);
  return { result, cpuPercent };
}

/** `gateway 180% | load generator 60%` */
export function formatCpu(cpuPercent: Record<string, number>): string {
  return Object.entries(cpuPercent)
    .map(([name, pct]) => `${name} ${pct}%`)
    .join(" | ");
}
