/**
 * The benchmarks' CPU meter counts a server that works in child processes (PostgreSQL: one
 * backend per connection) as a tree: a child's CPU, ended or live, is in its parent's tree
 * figure and not in the parent's own.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { expect, it } from "vitest";
import { cpuSecondsOf, treeCpuSecondsOf } from "../../bench/lib/cpu-meter.ts";

// A fixed amount of work (not a time): well over 0.1 s of CPU on any machine this runs on.
const WORK = "let x = 0; for (let i = 0; i < 3e8; i++) x += i % 7; if (x < 0) console.log(x);";
// A parent shell: one child burns and ends (its time moves to the parent's ended-children
// total), a second burns, prints its pid and stays alive until the parent is told to end.
const SCRIPT = `node -e "${WORK}"; node -e "${WORK} console.log(process.pid); setInterval(() => {}, 1000)" & read line; kill $!`;

it("a tree counts its children's CPU, ended and live; the root's own figure does not", async () => {
  const root = spawn("sh", ["-c", SCRIPT], { stdio: ["pipe", "pipe", "inherit"] });
  try {
    const lines = createInterface({ input: root.stdout! });
    const [livePid] = (await once(lines, "line")) as [string];
    const pid = root.pid as number;
    const live = await cpuSecondsOf(Number(livePid));
    const own = await cpuSecondsOf(pid);
    const tree = await treeCpuSecondsOf(pid);
    expect(live).toBeGreaterThan(0.1);
    // The live child plus the ended one (over 0.1 s) beside the shell's own.
    expect(tree).toBeGreaterThan(own + live + 0.1);
  } finally {
    root.stdin?.end("done\n");
    if (root.exitCode === null) await once(root, "exit");
  }
}, 120_000);
