/**
 * Comments and operator-facing strings cite the docs they rely on as `docs/<page>.md#<anchor>`:
 * every cited page and heading exists, and none cites a README section (those moved to docs/).
 * The checker itself fails on planted violations.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { headingAnchors } from "../docs/check-blocks.ts";
import { badCitations, listCitingFiles, readDocsPage } from "./doc-citations.ts";
import { ROOT } from "./import-graph.ts";

const TREES = ["src", "adapters", "bin", "emulators", "console", "test"];
/** Files that quote bad citations on purpose: this checker and its test, the docs checker's fixtures. */
const SELF = new Set([
  "test/architecture/doc-citations.ts",
  "test/architecture/doc-citations.test.ts",
  "test/docs/check-blocks.ts",
  "test/docs/doc-examples.test.ts",
]);

describe("documentation citations", () => {
  it("every docs/<page>.md#<anchor> cited in src, adapters, bin, emulators, console and test exists", () => {
    const files = listCitingFiles(TREES).filter((file) => !SELF.has(file));
    expect(files.length).toBeGreaterThan(100);
    const bad = files.flatMap((file) => badCitations(file, readFileSync(join(ROOT, file), "utf8"), readDocsPage));
    expect(bad.map((b) => `${b.file}:${b.line} ${b.citation}: ${b.reason}`)).toEqual([]);
  });

  it("the citations are really there (the scan is not vacuous)", () => {
    const text = readFileSync(join(ROOT, "adapters/store/redis/ioredis-runner.ts"), "utf8");
    expect(text).toContain("docs/several-instances.md#redis-settings");
    expect(headingAnchors(readDocsPage("several-instances") ?? "")).toContain("redis-settings");
  });

  it("takes anchors as GitHub makes them, ignoring lines in fenced code", () => {
    const page = "# Page\n\n## `POST /webhooks/{sourceId}`\n\n```sh\n# not a heading\n```\n\n## Page\n";
    expect([...headingAnchors(page)]).toEqual(["page", "post-webhookssourceid", "page-1"]);
  });

  it("reports a planted missing anchor, a missing page and README section citations", () => {
    const pages: Record<string, string> = {
      "several-instances": "# Running several instances\n\n### Redis settings\n",
    };
    const fixture = [
      "/**",
      " * Good: docs/several-instances.md#redis-settings and docs/several-instances.md.",
      " * Bad anchor: docs/several-instances.md#redis-setings.",
      " * Bad page: docs/no-such-page.md#anything.",
      ' * Old style: (README "Security") and (README,',
      ' * "Webhook ingress") and (README: Running several instances).',
      " */",
    ].join("\n");
    const bad = badCitations("fixture.ts", fixture, (page) => pages[page]);
    expect(bad.map((b) => [b.line, b.citation])).toEqual([
      [3, "docs/several-instances.md#redis-setings"],
      [4, "docs/no-such-page.md#anything"],
      [5, 'README "'],
      [5, 'README, "'],
      [6, "README: R"],
    ]);
  });
});
