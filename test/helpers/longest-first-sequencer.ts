/**
 * The order in which `npm test` starts the Node suite's files: the longest first, so that the two
 * workers finish together instead of one running a 3-minute file alone at the end (a long tail).
 *
 * A file's expected time comes from the committed table test/file-durations.json (measured in a
 * full run), not from vitest's cache: a fresh checkout or CI has no cache (vitest would then order
 * by file size, which says little about a file's time), and a cache left by running one file alone
 * would mix quiet and loaded timings. The same checkout always starts its files in the same order.
 * Files not in the table (new ones) start first, as vitest does with files it does not know: they
 * are likely new end-to-end suites, and a failure shows early. Regenerate the table after a full
 * run with the JSON reporter (test/run.sh writes one):
 * `node --import tsx test/helpers/file-durations.ts <report.json>`.
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import table from "../file-durations.json" with { type: "json" };

const measured: Record<string, number> = table.seconds;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expected = (spec: TestSpecification) =>
      measured[relative(root, spec.moduleId).split("\\").join("/")] ?? Number.POSITIVE_INFINITY;
    const byPath = [...files].sort((a, b) => (a.moduleId < b.moduleId ? -1 : a.moduleId > b.moduleId ? 1 : 0));
    // Longest first; equal times (two new files) in path order.
    return byPath
      .map((spec) => ({ spec, seconds: expected(spec) }))
      .sort((a, b) => (a.seconds === b.seconds ? 0 : b.seconds > a.seconds ? 1 : -1))
      .map(({ spec }) => spec);
  }
}
