/** Spawns a Node process for a benchmark and waits for the line that says where it listens. */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface Spawned {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
  /** Resident set size of the process in bytes (from /proc). */
  rss(): Promise<number>;
}

/**
 * Node flags that make a gateway process write a CPU profile on exit into `BENCH_CPU_PROF`
 * (read it with bench/lib/profile-top.ts), sampling every `BENCH_CPU_PROF_INTERVAL` µs (Node's
 * default 1000); none when the variable is unset.
 */
export function profileFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  const interval = process.env.BENCH_CPU_PROF_INTERVAL;
  if (!dir) return [];
  return ["--cpu-prof", "--cpu-prof-dir", dir, ...(interval ? ["--cpu-prof-interval", interval] : [])];
}

/** Starts `node <args>`; `readUrl` extracts the URL from an output line. */
export async function spawnAndWait(
  args: string[],
  readUrl: (line: string) => string | undefined,
  env: Record<string, string> = {},
): Promise<Spawned> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      const found = readUrl(line);
      if (found) {
        resolve(found);
        // Keep draining stdout (to nowhere) so the process never blocks on a full pipe.
        child.stdout?.resume();
      }
    });
    child.once("exit", (code) => reject(new Error(`process exited (${code}) before listening`)));
  });
  return {
    child,
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
    async rss() {
      const { readFile } = await import("node:fs/promises");
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      return kb * 1024;
    },
  };
}
