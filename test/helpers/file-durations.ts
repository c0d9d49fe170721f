/**
 * Writes test/file-durations.json (the order of test/helpers/longest-first-sequencer.ts) from the
 * JSON report of a full run of the Node suite:
 * `node --import tsx test/helpers/file-durations.ts <report.json>`. Each file's wall time, in
 * seconds, rounded; the table is sorted by path so that a regeneration diffs line by line.
 */
import { readFile, writeFile } from "node:fs/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const reportPath = process.argv[2];
if (!reportPath) {
  console.error("usage: node --import tsx test/helpers/file-durations.ts <vitest JSON report>");
  process.exit(1);
}
interface Report {
  testResults: { name: string; startTime: number; endTime: number }[];
}
const report = JSON.parse(await readFile(reportPath, "utf8")) as Report;
const seconds: Record<string, number> = {};
for (const file of report.testResults.toSorted((a, b) => (a.name < b.name ? -1 : 1))) {
  seconds[relative(root, file.name).split("\\").join("/")] = Math.max(
    1,
    Math.round((file.endTime - file.startTime) / 1000),
  );
}
const target = new URL("../file-durations.json", import.meta.url);
const note =
  "Wall time of each Node test file in a full `npm test` run (2 workers, 2 cores): the order of test/helpers/longest-first-sequencer.ts. Regenerate: node --import tsx test/helpers/file-durations.ts <report.json>";
await writeFile(target, `${JSON.stringify({ note, seconds }, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files written to ${fileURLToPath(target)}`);
