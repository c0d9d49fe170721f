/**
 * URL attributes in rendered HTML mail (docs/fan-out-and-destinations.md, email): `href`, `src`
 * and the other
 * attributes a mail client follows accept only `http:`, `https:` and `mailto:` URLs. Escaping
 * keeps an event value inside its attribute, but a value such as `javascript:…` or
 * `data:text/html,…` standing at the start of an `href` would still be a working link; such a
 * value (from the event or from the template) is replaced by `#`.
 */

const URL_ATTRIBUTE =
  /([\s/](?:href|src|action|formaction|background|poster|cite|longdesc|lowsrc|dynsrc|xlink:href)\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)/gi;
const ALLOWED_SCHEME = /^(?:https?:|mailto:)/i;
const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  colon: ":",
  tab: "\t",
  newline: "\n",
};

/** What a mail client reads from an attribute value: entities decoded. */
function decodeAttribute(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (whole, body: string) => {
    if (body[0] === "#") {
      const code = body[1] === "x" || body[1] === "X" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
  });
}

/** True when a URL attribute's value is an http(s) or mailto URL (as a browser would parse it). */
export function isAllowedMailUrl(rawValue: string): boolean {
  // Browsers drop leading spaces and control characters and ignore tabs and newlines anywhere in a scheme.
  const url = decodeAttribute(rawValue)
    .replace(/^[\u0000-\u0020]+/, "")
    .replace(/[\t\n\r]/g, "");
  return ALLOWED_SCHEME.test(url);
}

/** Replaces every URL attribute value of `html` that is not http(s)/mailto with `#`. */
export function guardUrlAttributes(html: string): string {
  return html.replace(URL_ATTRIBUTE, (whole, head: string, quoted: string, offset: number) => {
    // Only inside a tag: text content (event values are escaped, so they never open one) is left.
    const before = html.lastIndexOf("<", offset);
    if (before === -1 || html.lastIndexOf(">", offset) > before) return whole;
    const value = quoted[0] === '"' || quoted[0] === "'" ? quoted.slice(1, -1) : quoted;
    return isAllowedMailUrl(value) ? whole : `${head}"#"`;
  });
}
