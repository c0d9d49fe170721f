/**
 * The nesting bound of every JSON body the gateway parses (webhooks, enrichment answers): a
 * document nested deeper than `MAX_JSON_DEPTH` is refused before `JSON.parse`, because what
 * handles it afterwards (JSON.stringify into the store, schema checks) recurses and a few
 * thousand levels overflow the stack.
 */

/** Arrays and objects nested at most this deep (serde_json's default recursion limit). */
export const MAX_JSON_DEPTH = 128;

/** Does `text` nest arrays or objects deeper than `maxDepth`? One pass, no allocation. */
export function exceedsJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): boolean {
  // Each level opens with a `{` or `[`: a text with at most `maxDepth` of them (anywhere, strings
  // included) cannot exceed the bound. Counting them with indexOf is far cheaper than the scan.
  if (text.length <= maxDepth * 2 || countUpTo(text, "{", maxDepth) + countUpTo(text, "[", maxDepth) <= maxDepth) {
    return false;
  }
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** How often `char` occurs in `text`, counting no further than `limit + 1`. */
function countUpTo(text: string, char: string, limit: number): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && count <= limit; at = text.indexOf(char, at + 1)) count++;
  return count;
}

/** `JSON.parse` refusing documents nested deeper than `maxDepth` (throws a `SyntaxError`). */
export function parseBoundedJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (exceedsJsonDepth(text, maxDepth)) throw new SyntaxError(`JSON nested deeper than ${maxDepth} levels`);
  return JSON.parse(text);
}
