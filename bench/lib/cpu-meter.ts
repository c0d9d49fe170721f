/**
 * CPU time of benchmark processes, so a reader sees when the load generator, not the server, was
 * the limit: each spawned process from /proc/<pid>/stat (utime + stime), this process (the load
 * generator) from `process.cpuUsage()`.
 */
import { readdir, readFile } from "node:fs/promises";

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
  const fields = statFields(await readFile(path, "utf8"));
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The fields of a /proc stat line after the command name (which may contain spaces). */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * CPU seconds used so far by process `pid` and every process below it: the live descendants'
 * own time plus what the root recorded for its children that already ended (cutime + cstime).
 * For servers that work in child processes (PostgreSQL: one backend per connection).
 */
export async function treeCpuSecondsOf(pid: number): Promise<number> {
  const children = new Map<number, number[]>();
  const own = new Map<number, number>();
  let reaped = 0;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(await readFile(`/proc/${entry}/stat`, "utf8").catch(() => ""));
    if (fields.length < 15) continue;
    const id = Number(entry);
    const parent = Number(fields[1]);
    own.set(id, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
    if (id === pid) reaped = (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
    children.set(parent, [...(children.get(parent) ?? []), id]);
  }
  let total = reaped;
  const stack = [pid];
  for (let guard = 0; stack.length > 0 && guard < 100_000; guard++) {
    const id = stack.pop() as number;
    total += own.get(id) ?? 0;
    stack.push(...(children.get(id) ?? []));
  }
  return total;
}

/** A process to meter: its pid, or `{ tree: pid }` for it and its descendants. */
export type MeteredProcess = number | { tree: number } | undefined;

function secondsOf(target: Exclude<MeteredProcess, undefined>): Promise<number> {
  return typeof target === "number" ? cpuSecondsOf(target) : treeCpuSecondsOf(target.tree);
}

/**
 * Runs `work` and returns its result with the CPU used meanwhile by each named process and by
 * the load generator, as a share of one core over the wall time (100 = one core busy).
 */
export async function withCpu<T>(
  processes: Record<string, MeteredProcess>,
  work: () => Promise<T>,
): Promise<{ result: T; cpuPercent: Record<string, number> }> {
  const started = performance.now();
  const own = process.cpuUsage();
  const before: Record<string, number> = {};
  for (const [name, pid] of Object.entries(processes)) if (pid) before[name] = await secondsOf(pid);
  const result = await work();
  const wall = (performance.now() - started) / 1000;
  const cpuPercent: Record<string, number> = {};
  for (const [name, pid] of Object.entries(processes)) {
    if (!pid || before[name] === undefined) continue;
    cpuPercent[name] = Math.round((((await secondsOf(pid)) - before[name]) / wall) * 100);
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
