import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/helpers/longest-first-sequencer.ts";

/**
 * The suites that `npm test` runs a second time with webhooks through h3 (GATEWAY_WEBHOOK_FAST_PATH=off):
 * both paths must pass them. test/run.sh sets TEST_BOTH_WEBHOOK_PATHS=1, which adds them as a second
 * project ("h3-webhooks") of the same run: they fill the two workers with the rest instead of
 * running in a separate step after it. Without the variable the config is the plain Node suite.
 */
export const H3_WEBHOOK_FILES = [
  "test/ingress/ingress-answers.test.ts",
  "test/ingress/forged-deliveries.test.ts",
  "test/ingress/raw-bytes.test.ts",
  "test/ingress/concurrent-deliveries.test.ts",
  "test/security/webhook-hostile-traffic.test.ts",
  "test/security/refused-body-linger.test.ts",
  "test/ingress/bodies-in-flight.test.ts",
];

const nodeSuite = { include: ["test/**/*.test.ts"], exclude: ["test/workerd/**", "node_modules/**"] };

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The gateway processes run the compiled sources (dist/), built here when they changed.
    globalSetup: ["test/helpers/compile-global-setup.ts"],
    // Property tests from one fixed seed (FC_SEED to explore others): the suite is deterministic.
    setupFiles: ["test/helpers/fast-check-seed.ts"],
    // Most suites wait on the gateway processes they spawn: one worker per core (vitest leaves one
    // core idle by default, a single worker on a 2-core machine).
    maxWorkers: 2,
    // The longest files first (measured times in test/file-durations.json), so that both workers
    // finish together: no file of several minutes left running alone at the end.
    sequence: { sequencer: LongestFirstSequencer },
    ...(process.env.TEST_BOTH_WEBHOOK_PATHS === "1"
      ? {
          projects: [
            { extends: true, test: { name: "node", ...nodeSuite } },
            {
              extends: true,
              test: { name: "h3-webhooks", include: H3_WEBHOOK_FILES, env: { GATEWAY_WEBHOOK_FAST_PATH: "off" } },
            },
          ],
        }
      : nodeSuite),
  },
});
