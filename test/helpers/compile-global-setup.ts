/**
 * Vitest global setup of the Node suite: compiles the sources into dist/ (bin/compiled-sources.js)
 * unless it is fresh, so that the gateway and CLI processes the suites start run the compiled
 * JavaScript, as `npm start` does. bin/gateway.js checks freshness itself on every start: a source
 * changed after this point makes it run the sources through tsx, never stale output.
 */
import { compile } from "../../bin/compiled-sources.js";

export default function setup(): void {
  compile(undefined, { log: (line: string) => console.log(`[compile] ${line}`) });
}
