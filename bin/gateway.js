#!/usr/bin/env node
// The `gateway` command: runs the TypeScript sources through tsx (no build step).
import { register } from "tsx/esm/api";

register();
await import("../adapters/node/cli.ts");
