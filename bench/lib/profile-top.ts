/**
 * Prints the top frames by self time of V8 CPU profiles (`node --cpu-prof`), the table
 * BENCHMARKS.md records before and after a change. `node --import tsx bench/lib/profile-top.ts
 * <file.cpuprofile|dir> [count]`. Benchmarks write profiles of the gateway process when
 * `BENCH_CPU_PROF=<dir>` is set.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per frame (function, file, line) in microseconds, summed over the profile. */
export function selfTimes(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const times = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url ? relative(process.cwd(), url.replace(/^file:\/\//, "")) : "";
    const key = `${functionName || "(anonymous)"}  ${file}${file ? `:${lineNumber + 1}` : ""}`;
    times.set(key, (times.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return times;
}

async function main() {
  const [target = ".", countArg = "25"] = process.argv.slice(2);
  const files = (await stat(target)).isDirectory()
    ? (await readdir(target)).filter((f) => f.endsWith(".cpuprofile")).map((f) => join(target, f))
    : [target];
  for (const file of files) {
    const times = selfTimes(JSON.parse(await readFile(file, "utf8")) as Profile);
    const total = [...times.values()].reduce((a, b) => a + b, 0);
    const idle = times.get("(idle)  ") ?? 0;
    console.log(
      `\n${file}: ${(total / 1e6).toFixed(1)} s sampled, ${((100 * (total - idle)) / total).toFixed(1)} % busy`,
    );
    const top = [...times.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(countArg));
    for (const [frame, us] of top) {
      console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${frame}`);
    }
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop() ?? "")) await main();
