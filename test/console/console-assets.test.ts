/**
 * The committed console build (`src/console/console-assets.generated.ts`) is what
 * `npm run build:console` produces from `console/` today: the test rebuilds it with esbuild and
 * fails when the committed file is stale. It also holds the size budget (well under 150 KB).
 */
import { readFile } from "node:fs/promises";
import { expect, test } from "vitest";
import { buildConsoleModule, GENERATED_PATH } from "../../console/build-console.ts";
import { CONSOLE_ASSETS, CONSOLE_HTML } from "../../src/console/console-assets.generated.ts";

test("the committed console assets are up to date with console/ (run npm run build:console)", async () => {
  const [built, committed] = await Promise.all([buildConsoleModule(), readFile(GENERATED_PATH, "utf8")]);
  expect(committed === built, "src/console/console-assets.generated.ts is stale: run npm run build:console").toBe(true);
});

test("the generated module stays small and the page names exactly its hashed assets", async () => {
  const size = (await readFile(GENERATED_PATH)).byteLength;
  expect(size).toBeLessThan(100 * 1024);
  // Sorted by extension: the content hashes alone decide the order of a plain sort.
  const extension = (name: string) => name.slice(name.lastIndexOf("."));
  const names = Object.keys(CONSOLE_ASSETS).sort((a, b) => extension(a).localeCompare(extension(b)));
  expect(names).toEqual([
    expect.stringMatching(/^app\.[0-9a-f]{12}\.css$/),
    expect.stringMatching(/^app\.[0-9a-f]{12}\.js$/),
  ]);
  for (const name of names) expect(CONSOLE_HTML).toContain(`/console/assets/${name}`);
  // No inline script or style: the CSP (script-src 'self', style-src 'self') would refuse them.
  expect(CONSOLE_HTML).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
});
