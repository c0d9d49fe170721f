/** Types of bin/compiled-sources.js (plain JavaScript: it runs before any TypeScript loader). */
export declare const ROOT: string;
export declare function isCompiledFresh(root?: string): boolean;
export declare function compiledCli(root?: string): string | undefined;
export declare function compile(
  root?: string,
  options?: { log?: (line: string) => void },
): "fresh" | "built" | "unavailable";
