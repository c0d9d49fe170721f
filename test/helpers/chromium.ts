/**
 * Launches Debian's Chromium (`/usr/bin/chromium`, installed by `test/run.sh`) headless through
 * playwright-core, with the flags that work on these machines. A missing browser is an error
 * with the fix in its message, never a silent skip.
 */
import { access, constants } from "node:fs/promises";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** Launches Chromium; throws a clear error when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  try {
    await access(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}. Run the tests with \`npm test\` (test/run.sh installs it), ` +
        "or install it yourself: apt-get update && apt-get install -y chromium",
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}
