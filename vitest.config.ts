import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/workerd/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most suites wait on the gateway processes they spawn: one worker per core (vitest leaves one
    // core idle by default, a single worker on a 2-core machine).
    maxWorkers: 2,
  },
});
