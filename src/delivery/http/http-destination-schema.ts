/**
 * The `http` destination: every routed event is POSTed to `url`, signed per Standard Webhooks
 * (`webhook-id` = gateway event id, `webhook-timestamp`, `webhook-signature: v1,<base64>`), as
 * the CloudEvent JSON (`cloudevent` mode) or as the original upstream body and headers
 * (`relay` mode). The SSRF guard refuses non-public addresses unless allowed here explicitly.
 */
import * as v from "valibot";
import { AddressPolicyEntries } from "../../ssrf/address-policy-schema.ts";
import { DeliveryPolicyEntries } from "../delivery-policy.ts";
import { httpUrlWithoutCredentials } from "./http-url-schema.ts";

const id = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or -"));

/** `whsec_` + base64 of 24..64 random bytes (Standard Webhooks); put it in the environment. */
const whsecSecret = v.pipe(
  v.string(),
  v.check(
    (value) => decodedSecretLength(value) !== undefined,
    "a Standard Webhooks secret: whsec_ + base64 of 24..64 bytes",
  ),
);

function decodedSecretLength(value: string): number | undefined {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (!match?.[1]) return undefined;
  try {
    const length = atob(match[1]).length;
    return length >= 24 && length <= 64 ? length : undefined;
  } catch {
    return undefined;
  }
}

const httpUrl = httpUrlWithoutCredentials("an http:// or https:// URL without credentials");

/** Headers the gateway sets itself and a config may not override. */
const RESERVED_HEADERS =
  /^(webhook-.*|content-type|content-length|host|connection|transfer-encoding|te|upgrade|keep-alive|trailer|proxy-.*)$/i;

const headerName = v.pipe(
  v.string(),
  v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "an HTTP header name"),
  v.check((name) => !RESERVED_HEADERS.test(name), "a header the gateway does not set itself"),
);

export const HttpDestinationSchema = v.strictObject({
  id,
  type: v.literal("http"),
  /** Where events are POSTed. Redirects are not followed. */
  url: httpUrl,
  /** `cloudevent` (default): the CloudEvent JSON. `relay`: the upstream's raw body and headers. */
  mode: v.optional(v.picklist(["cloudevent", "relay"]), "cloudevent"),
  /** Active signing secrets, `${ENV}` references; each one signs (rotation). */
  secrets: v.pipe(v.array(whsecSecret), v.minLength(1, "at least one secret"), v.maxLength(8)),
  /** Extra static headers (e.g. an `authorization` the receiver wants). Default none. */
  headers: v.optional(v.record(headerName, v.pipe(v.string(), v.maxLength(8192)))),
  /** Seconds one attempt may take, connect to last byte. Default 15. */
  timeoutSeconds: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(300)), 15),
  /** The SSRF guard's exceptions: `allowPrivateNetworks` (default false) and `allowCidrs`. */
  ...AddressPolicyEntries,
  ...DeliveryPolicyEntries,
});

export type HttpDestination = v.InferOutput<typeof HttpDestinationSchema>;
