/**
 * Which `X-Forwarded-For` entries count as addresses: table cases for `isIpAddress` and
 * `keepIpEntries` (the Node adapter drops the others before srvx resolves the client).
 */
import { describe, expect, it } from "vitest";
import { isIpAddress, keepIpEntries } from "../../src/http/client-address.ts";

describe("isIpAddress", () => {
  it.each([
    ["203.0.113.5", true],
    ["0.0.0.0", true],
    ["255.255.255.255", true],
    ["2001:db8::1", true],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["256.1.1.1", false],
    ["127.1", false],
    ["0x7f.0.0.1", false],
    ["not-an-ip", false],
    ["unknown", false],
    ["_hidden", false],
    ["203.0.113.5:443", false],
    ["[2001:db8::1]", false],
    ["fe80::1%eth0", false],
    ["", false],
    ["1.2.3.4\u0000", false],
  ])("%j → %s", (text, expected) => {
    expect(isIpAddress(text)).toBe(expected);
  });
});

describe("keepIpEntries", () => {
  it.each([
    ["203.0.113.5", "203.0.113.5"],
    ["not-an-ip", ""],
    ["198.51.100.7, unknown", "198.51.100.7"],
    [" 198.51.100.7 ,2001:db8::2 , example.com", "198.51.100.7, 2001:db8::2"],
    [",,", ""],
  ])("%j → %j", (header, expected) => {
    expect(keepIpEntries(header)).toBe(expected);
  });
});
