/**
 * The email destination in the gateway configuration: defaults, what is refused with the field
 * path, and credentials for SMTP and Redis from `${ENV}` references.
 */
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../../src/config/resolve-config.ts";
import { EmailDestinationSchema } from "../../../src/delivery/email/email-destination-schema.ts";

const base = {
  id: "ops-mail",
  type: "email",
  host: "smtp.example.com",
  from: "gateway@example.com",
  to: ["ops@example.com"],
};

function configWith(destination: Record<string, unknown>) {
  return {
    sources: [{ id: "esign", service: "esign", secrets: ["${ESIGN_SECRET}"] }],
    destinations: [destination],
    routes: [{ types: ["agreement.*"], destinations: [destination.id] }],
  };
}
const env = {
  ESIGN_SECRET: "esign-secret-0123456789",
  SMTP_PASSWORD: "smtp-pass-0123",
  REDIS_PASSWORD: "redis-pass-0123",
};

describe("EmailDestinationSchema", () => {
  it("applies the documented defaults", () => {
    expect(v.parse(EmailDestinationSchema, base)).toEqual({
      ...base,
      transport: "smtp",
      secure: false,
      requireTLS: false,
      tlsRejectUnauthorized: true,
      cc: [],
      bcc: [],
      toFields: [],
      templates: {},
      messageIdDomain: "gateway",
      timeoutMs: 30_000,
      maxConnections: 2,
      allowPrivateNetworks: false,
    });
  });

  it.each([
    ["display-name sender", { from: "Gateway Alerts <alerts@example.com>" }, true],
    [
      "recipients from fields only",
      { to: [], toFields: ["data.participant.email", "data.participants.*.email"] },
      true,
    ],
    [
      "pattern templates",
      { templates: { "agreement.*": { subject: "{{type}}", text: '{{data.status | "?"}}' } } },
      true,
    ],
    ["sender without address", { from: "Gateway" }, false],
    ["sender with a line break", { from: "a@example.com\r\nBcc: x@example.com" }, false],
    ["invalid recipient", { to: ["not-an-address"] }, false],
    ["recipient path with spaces", { toFields: ["data.participant email"] }, false],
    ["template with an expression", { templates: { "*": { subject: "{{ data.a + 1 }}", text: "x" } } }, false],
    ["template without text", { templates: { "*": { subject: "s" } } }, false],
    ["bad message id domain", { messageIdDomain: "gate way" }, false],
    ["port out of range", { port: 70_000 }, false],
    ["delivery policy", { retry: { schedule: [60, 600] }, rateLimitPerSecond: 5, ordering: "subject" }, true],
    ["invalid delivery policy", { ordering: "fifo" }, false],
    ["unknown key", { recipients: ["a@example.com"] }, false],
    ["private networks allowed", { allowPrivateNetworks: true }, true],
    ["allowed ranges", { allowCidrs: ["10.1.0.0/16", "::1/128"] }, true],
    ["malformed range", { allowCidrs: ["10.1.0.0/40"] }, false],
    ["allowPrivateNetworks not a boolean", { allowPrivateNetworks: "yes" }, false],
  ])("%s", (_, patch, valid) => {
    expect(v.safeParse(EmailDestinationSchema, { ...base, ...patch }).success).toBe(valid);
  });
});

describe("in the gateway configuration", () => {
  it("takes SMTP credentials from the environment", () => {
    const config = resolveConfig(configWith({ ...base, auth: { user: "gateway", pass: "${SMTP_PASSWORD}" } }), env);
    expect(config.destinations[0]).toMatchObject({ type: "email", auth: { user: "gateway", pass: "smtp-pass-0123" } });
  });

  it("takes the Redis password of a queue destination from the environment", () => {
    const queue = { id: "jobs", type: "queue", url: "redis://:${REDIS_PASSWORD}@127.0.0.1:6379", stream: "events" };
    expect(resolveConfig(configWith(queue), env).destinations[0]).toMatchObject({
      url: "redis://:redis-pass-0123@127.0.0.1:6379",
      maxLen: 100_000,
    });
  });

  it("names the field of an invalid template and never echoes a secret", () => {
    const bad = {
      ...base,
      auth: { user: "u", pass: "${SMTP_PASSWORD}" },
      templates: { "*": { subject: "{{ 1+1 }}", text: "x" } },
    };
    try {
      resolveConfig(configWith(bad), env);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as ConfigError).message;
      expect(message).toContain("destinations.0.templates.*.subject");
      expect(message).not.toContain("smtp-pass-0123");
    }
  });
});
