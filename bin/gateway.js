#!/usr/bin/env node
// The `gateway` command: the compiled JavaScript in dist/ when it was built from the sources as they are
// (`npm run build`, see bin/compiled-sources.js), otherwise the TypeScript sources through tsx.
import { compiledCli } from "./compiled-sources.js";

const compiled = compiledCli();
if (compiled) {
  await import(compiled);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../adapters/node/cli.ts");
}
