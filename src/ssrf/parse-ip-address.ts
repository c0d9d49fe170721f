/**
 * IP address parsing for the SSRF guard, pure and runtime-agnostic. IPv4 accepts every form a
 * resolver or URL parser might turn into an address (inet_aton): 1 to 4 parts, each decimal,
 * octal (`0177`) or hex (`0x7f`), the last part filling the remaining bytes (`2130706433`,
 * `127.1`). IPv6 accepts `::` compression, an embedded dotted IPv4 tail, brackets and a zone.
 */

export type ParsedIp = { version: 4; value: number } | { version: 6; words: number[] };

function parsePart(part: string): number | undefined {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return Number.parseInt(part.slice(1), 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number(part);
  return undefined;
}

/** An IPv4 address in any inet_aton form, as an unsigned 32-bit number. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.endsWith(".") ? text.slice(0, -1).split(".") : text.split(".");
  if (parts.length < 1 || parts.length > 4 || parts.some((p) => p.length === 0 || p.length > 34)) return undefined;
  const values = parts.map(parsePart);
  if (values.some((n) => n === undefined)) return undefined;
  const nums = values as number[];
  const last = nums[nums.length - 1] as number;
  if (nums.slice(0, -1).some((n) => n > 255)) return undefined;
  if (last >= 2 ** (8 * (5 - nums.length))) return undefined;
  let value = 0;
  for (let i = 0; i < nums.length - 1; i++) value += (nums[i] as number) * 2 ** (8 * (3 - i));
  return value + last;
}

/** Strict dotted-quad decimal IPv4 (the only form allowed inside IPv6 text). */
function parseDottedQuad(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function parseGroups(text: string): number[] | undefined {
  if (text === "") return [];
  const out: number[] = [];
  const groups = text.split(":");
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i] as string;
    if (i === groups.length - 1 && group.includes(".")) {
      const v4 = parseDottedQuad(group);
      if (v4 === undefined) return undefined;
      out.push(v4 >>> 16, v4 & 0xffff);
    } else if (/^[0-9a-f]{1,4}$/i.test(group)) out.push(Number.parseInt(group, 16));
    else return undefined;
  }
  return out;
}

/** An IPv6 address as eight 16-bit words. */
export function parseIPv6(text: string): number[] | undefined {
  let address = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const zone = address.indexOf("%");
  if (zone !== -1) address = address.slice(0, zone);
  if (!address.includes(":")) return undefined;
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  if (halves.length === 1) {
    const words = parseGroups(address);
    return words?.length === 8 ? words : undefined;
  }
  const head = parseGroups(halves[0] as string);
  const tail = parseGroups(halves[1] as string);
  if (!head || !tail || head.length + tail.length > 7) return undefined;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** Parses either family; undefined for anything that is not an address (a host name). */
export function parseIp(text: string): ParsedIp | undefined {
  const words = parseIPv6(text);
  if (words) return { version: 6, words };
  const value = parseIPv4(text);
  return value === undefined ? undefined : { version: 4, value };
}

/** Dotted-quad text of a 32-bit IPv4 value. */
export function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}
