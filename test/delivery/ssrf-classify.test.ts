/**
 * The SSRF table: the pure classifier and policy on every non-public range, every IPv4 spelling
 * a resolver or URL parser accepts, and every IPv6 form that embeds an IPv4 address.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkAddress, parseCidr } from "../../src/ssrf/address-policy.ts";
import { classifyAddress } from "../../src/ssrf/classify-address.ts";
import { formatIPv4, parseIPv4 } from "../../src/ssrf/parse-ip-address.ts";

const refused: [string, string][] = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["::1", "loopback"],
  ["0.0.0.0", "unspecified"],
  ["::", "unspecified"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "cgnat"],
  ["100.127.255.254", "cgnat"],
  ["169.254.1.1", "link-local"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["169.254.169.254", "metadata"],
  ["169.254.170.2", "metadata"],
  ["100.100.100.200", "metadata"],
  ["fd00:ec2::254", "metadata"],
  ["fc00::1", "unique-local"],
  ["fd12:3456::1", "unique-local"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["ff02::1", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved"],
  ["0.1.2.3", "reserved"],
  ["192.0.0.8", "reserved"],
  ["192.88.99.1", "reserved"],
  ["fec0::1", "reserved"],
  ["100::1", "reserved"],
  ["64:ff9b:1::1", "reserved"],
  ["2001:10::1", "reserved"],
  ["192.0.2.1", "documentation"],
  ["198.51.100.1", "documentation"],
  ["203.0.113.1", "documentation"],
  ["2001:db8::1", "documentation"],
  ["3fff::1", "documentation"],
  ["198.18.0.1", "benchmarking"],
  ["2001:2::1", "benchmarking"],
  // Other spellings of 127.0.0.1 and 10.0.0.1 (inet_aton: decimal, octal, hex, short forms).
  ["2130706433", "loopback"],
  ["0x7f000001", "loopback"],
  ["017700000001", "loopback"],
  ["0177.0.0.1", "loopback"],
  ["0x7f.0.0.1", "loopback"],
  ["127.1", "loopback"],
  ["127.0.1", "loopback"],
  ["0x7f.1", "loopback"],
  ["127.0.0.1.", "loopback"],
  ["012.0.0.1", "private"],
  ["167772161", "private"],
  ["0xa9.0xfe.0xa9.0xfe", "metadata"],
  ["2852039166", "metadata"],
];

const embedded: [string, string, string, string][] = [
  ["::ffff:127.0.0.1", "ipv4-mapped", "127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "ipv4-mapped", "127.0.0.1", "loopback"],
  ["[::ffff:169.254.169.254]", "ipv4-mapped", "169.254.169.254", "metadata"],
  ["0:0:0:0:0:ffff:a00:1", "ipv4-mapped", "10.0.0.1", "private"],
  ["::127.0.0.1", "ipv4-compatible", "127.0.0.1", "loopback"],
  ["64:ff9b::127.0.0.1", "nat64", "127.0.0.1", "loopback"],
  ["64:ff9b::a9fe:a9fe", "nat64", "169.254.169.254", "metadata"],
  ["2002:c0a8:0101::1", "6to4", "192.168.1.1", "private"],
  ["2002:7f00:1::", "6to4", "127.0.0.1", "loopback"],
  // Teredo: client 10.0.0.1 stored inverted (0xf5ff:0xfffe).
  ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "teredo", "10.0.0.1", "private"],
];

const allowed = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.215.14",
  "172.32.0.1",
  "100.128.0.1",
  "2606:4700:4700::1111",
  "2a00:1450:4001:82b::200e",
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
  "2002:808:808::1",
];

describe("SSRF classifier", () => {
  it.each(refused)("refuses %s as %s", (address, category) => {
    expect(classifyAddress(address).category).toBe(category);
    const decision = checkAddress(address, {});
    expect(decision.allowed).toBe(false);
  });

  it.each(embedded)("judges %s (%s) by the IPv4 it embeds", (address, via, v4, category) => {
    expect(classifyAddress(address)).toEqual({ category, via, embedded: v4 });
    expect(checkAddress(address, {}).allowed).toBe(false);
  });

  it.each(allowed)("allows the public address %s", (address) => {
    expect(checkAddress(address, {})).toMatchObject({ allowed: true });
  });

  it("rejects what is not an address", () => {
    for (const text of [
      "localhost",
      "example.com",
      "1.2.3.4.5",
      "256.1.1.1",
      "08.1.1.1",
      "::1::2",
      "1:2:3:4:5:6:7:8:9",
      "",
    ]) {
      expect(classifyAddress(text).category, text).toBe("invalid");
    }
  });

  it("allowPrivateNetworks allows private ranges but never metadata, multicast or unspecified", () => {
    const policy = { allowPrivateNetworks: true };
    for (const address of [
      "127.0.0.1",
      "::1",
      "10.1.2.3",
      "192.168.0.10",
      "100.64.1.1",
      "fd12::1",
      "fe80::1",
      "::ffff:127.0.0.1",
    ]) {
      expect(checkAddress(address, policy).allowed, address).toBe(true);
    }
    for (const address of [
      "169.254.169.254",
      "fd00:ec2::254",
      "0.0.0.0",
      "::",
      "224.0.0.1",
      "255.255.255.255",
      "240.0.0.1",
    ]) {
      expect(checkAddress(address, policy).allowed, address).toBe(false);
    }
  });

  it("allowCidrs allows exactly the listed ranges", () => {
    const policy = { allowCidrs: ["127.0.0.1/32", "10.20.0.0/16", "fd00:ec2::254/128"] };
    expect(checkAddress("127.0.0.1", policy).allowed).toBe(true);
    expect(checkAddress("127.0.0.2", policy).allowed).toBe(false);
    expect(checkAddress("10.20.255.1", policy).allowed).toBe(true);
    expect(checkAddress("10.21.0.1", policy).allowed).toBe(false);
    expect(checkAddress("fd00:ec2::254", policy).allowed).toBe(true);
    expect(checkAddress("::1", policy).allowed).toBe(false);
  });

  it("parses CIDRs strictly", () => {
    expect(parseCidr("10.0.0.0/8")).toEqual({ version: 4, base: 0x0a000000n, bits: 8 });
    expect(parseCidr("::1/128")?.bits).toBe(128);
    expect(parseCidr("10.0.0.0/33")).toBeUndefined();
    expect(parseCidr("localhost/8")).toBeUndefined();
    expect(parseCidr("::1/129")).toBeUndefined();
  });

  it("every inet_aton spelling of an address classifies like its dotted form (property)", () => {
    const spell = (n: number, radix: 8 | 10 | 16) =>
      radix === 16 ? `0x${n.toString(16)}` : radix === 8 ? `0${n.toString(8)}` : String(n);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.constantFrom<8 | 10 | 16>(8, 10, 16),
        fc.integer({ min: 1, max: 4 }),
        (value, radix, parts) => {
          const bytes = [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255];
          const head = bytes.slice(0, parts - 1);
          const rest = bytes.slice(parts - 1).reduce((acc, b) => acc * 256 + b, 0);
          const text = [...head, rest].map((n) => (n === 0 ? "0" : spell(n, radix))).join(".");
          expect(parseIPv4(text)).toBe(value);
          expect(classifyAddress(text)).toEqual(classifyAddress(formatIPv4(value)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
