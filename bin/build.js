#!/usr/bin/env node
// `npm run build`: compiles the TypeScript sources into dist/ unless it is already fresh
// (bin/compiled-sources.js). Without the compiler installed it says so and exits 0: the gateway
// then runs its sources through tsx. Messages go to stderr (`npm pack --json` keeps a clean stdout).
import { compile } from "./compiled-sources.js";

const outcome = compile(undefined, { log: (line) => console.error(line) });
if (outcome === "fresh") console.error("dist/ is up to date");
