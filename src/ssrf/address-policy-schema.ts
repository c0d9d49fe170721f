/**
 * The config fields of a destination's SSRF address policy (address-policy.ts), shared by every
 * destination type that connects to an address it is given: `http` destinations and `email`
 * destinations (the SMTP host, or the mail API's URL).
 */
import * as v from "valibot";
import { parseCidr } from "./address-policy.ts";

const cidr = v.pipe(
  v.string(),
  v.check((value) => parseCidr(value) !== undefined, "a CIDR such as 127.0.0.1/32 or ::1/128"),
);

export const AddressPolicyEntries = {
  /** Allow loopback, private, link-local, CGNAT and unique-local addresses. Default false. */
  allowPrivateNetworks: v.optional(v.boolean(), false),
  /** Address ranges allowed even though they are not public (metadata included). Default none. */
  allowCidrs: v.optional(v.pipe(v.array(cidr), v.maxLength(64))),
};
