/**
 * Extracts every fenced block of a Markdown page with its `<!-- doctest ... -->` annotation and
 * classifies it into one of the kinds docs/contributing.md defines. A block of no known kind is
 * returned as `unknown`, which the doc test reports as a failure, so nothing escapes unchecked.
 */

/** What the doc test does with a block (docs/contributing.md, "Examples that run"). */
export type BlockKind =
  /** ```sh / ```bash: run in the page's session (or skipped with a reason). */
  | "recipe"
  /** ```json config: a complete gateway configuration, validated by resolveConfig. */
  | "json-config"
  /** ```ts config: a config module whose default export is validated by resolveConfig (and typechecked). */
  | "ts-config"
  /** ```json: an answer, payload or frame; must parse as JSON. */
  | "json"
  /** ```js / ```ts / ```html: code a reader adapts; must parse (the html's module scripts). */
  | "code"
  /** ```text: sample output; ```toml: a wrangler.toml fragment. Not run. */
  | "output"
  /** ```mermaid: a diagram; not run. */
  | "diagram"
  | "unknown";

/** The directives of a `<!-- doctest ... -->` comment. */
export interface Annotation {
  /** Recipe blocks with the same session share one temp dir, network and shell. Default `page`. */
  session?: string;
  /** Run in the background; the regex its output must match before the next block starts. */
  background?: string;
  /** Regexes the block's output must match (each line one). */
  expect: string[];
  /** `NAME=value`: environment of this block and the later ones of its session; config placeholders. */
  env: Record<string, string>;
  /** Why the block is not run (recipes only). */
  skip?: string;
  /** Seconds within which a read-only block's `expect` must come true: it is re-run until then. */
  eventually?: number;
  /** Seconds the block may take (recipes). Default 30. */
  timeout?: number;
  /** Write the block into the session's directory under this name before the session starts. */
  file?: string;
  /** `zero-config` (default: `npm start` runs first unless a block of the session starts things itself) or `none`. */
  gateway?: "zero-config" | "none";
}

export interface DocBlock {
  /** Page path relative to the repository. */
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string as written (`json config`, `sh`). */
  info: string;
  kind: BlockKind;
  /** The block's content with the fence's indentation removed. */
  body: string;
  annotation: Annotation;
  /** Problems found while reading the annotation (unknown directive, bad value). */
  problems: string[];
}

const KNOWN_DIRECTIVES = new Set([
  "session",
  "background",
  "expect",
  "env",
  "skip",
  "timeout",
  "file",
  "gateway",
  "eventually",
]);

/** The kind of a block from its info string. */
export function classify(info: string): BlockKind {
  const [lang = "", ...flags] = info.trim().split(/\s+/);
  const flag = flags.join(" ");
  if ((lang === "sh" || lang === "bash") && flag === "") return "recipe";
  if (lang === "json" && flag === "config") return "json-config";
  if ((lang === "ts" || lang === "typescript") && flag === "config") return "ts-config";
  if (lang === "json" && flag === "") return "json";
  if (["js", "javascript", "ts", "typescript", "html"].includes(lang) && flag === "") return "code";
  if ((lang === "text" || lang === "toml") && flag === "") return "output";
  if (lang === "mermaid" && flag === "") return "diagram";
  return "unknown";
}

/** Reads the directives of one annotation comment's text (what stands between `doctest` and `-->`). */
export function parseAnnotation(text: string): { annotation: Annotation; problems: string[] } {
  const annotation: Annotation = { expect: [], env: {} };
  const problems: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const match = /^([a-z-]+):\s*(.*)$/.exec(line);
    if (!match || !KNOWN_DIRECTIVES.has(match[1] as string)) {
      problems.push(`doctest annotation: unknown directive "${line}"`);
      continue;
    }
    const [, key, value = ""] = match;
    switch (key) {
      case "expect":
        annotation.expect.push(value);
        break;
      case "env": {
        const eq = value.indexOf("=");
        if (eq <= 0) problems.push(`doctest annotation: env needs NAME=value, got "${value}"`);
        else annotation.env[value.slice(0, eq)] = value.slice(eq + 1);
        break;
      }
      case "timeout":
      case "eventually": {
        const seconds = Number(value);
        if (!(seconds > 0 && seconds <= 120))
          problems.push(`doctest annotation: ${key} 1..120 seconds, got "${value}"`);
        else annotation[key] = seconds;
        break;
      }
      case "gateway":
        if (value !== "zero-config" && value !== "none")
          problems.push(`doctest annotation: gateway is zero-config or none`);
        else annotation.gateway = value;
        break;
      case "skip":
        if (value.length < 10) problems.push("doctest annotation: skip needs a reason (a sentence)");
        annotation.skip = value;
        break;
      default:
        if (value === "") problems.push(`doctest annotation: ${key} needs a value`);
        (annotation as unknown as Record<string, string>)[key as string] = value;
    }
  }
  return { annotation, problems };
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;
const ANNOTATION = /<!--\s*doctest\b([\s\S]*?)-->\s*$/;

/** Every fenced block of `markdown` (the text of `page`), in order. */
export function extractBlocks(page: string, markdown: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  // Text since the previous block: the annotation must be the last thing in it.
  let between: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) {
      between.push(lines[i] as string);
      continue;
    }
    const [, indent = "", fence = "", info = ""] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j] as string;
      const close = /^(\s*)(`{3,}|~{3,})\s*$/.exec(line);
      if (close && (close[2] as string)[0] === fence[0] && (close[2] as string).length >= fence.length) break;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    const before = between.join("\n").trimEnd();
    const comment = ANNOTATION.exec(before);
    const parsed = comment
      ? parseAnnotation(comment[1] as string)
      : { annotation: { expect: [], env: {} }, problems: [] };
    blocks.push({
      page,
      line: i + 1,
      info: info.trim(),
      kind: classify(info),
      body: `${body.join("\n")}\n`,
      annotation: parsed.annotation,
      problems: [...parsed.problems, ...(j >= lines.length ? ["unclosed fence"] : [])],
    });
    between = [];
    i = j;
  }
  return blocks;
}

/** Annotations a block of this kind may carry (others are a mistake the doc test reports). */
export function misplacedDirectives(block: DocBlock): string[] {
  const a = block.annotation;
  const used = Object.entries(a)
    .filter(([key, value]) =>
      key === "expect" || key === "env"
        ? Object.keys(value as object).length > 0 || (Array.isArray(value) && value.length > 0)
        : value !== undefined,
    )
    .map(([key]) => key);
  const allowed: Record<BlockKind, string[]> = {
    recipe: ["session", "background", "expect", "env", "skip", "timeout", "gateway", "eventually"],
    "json-config": ["env", "file", "session"],
    "ts-config": ["env"],
    json: [],
    code: ["file", "session"],
    output: [],
    diagram: [],
    unknown: [],
  };
  return used.filter((key) => !allowed[block.kind].includes(key));
}
