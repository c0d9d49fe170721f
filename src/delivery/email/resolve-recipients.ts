/**
 * The recipients of one mail: the destination's static `to`, plus every address found at its
 * `toFields` in the event. Addresses from events are checked like configured ones (a field
 * could hold anything, including line breaks aimed at the headers) and deduplicated.
 */
import * as v from "valibot";
import type { GatewayEvent } from "../../events/envelope.ts";
import { EmailAddressSchema, type EmailDestination } from "./email-destination-schema.ts";
import { collectEventPath } from "./read-event-path.ts";

/** More recipients than this from one event is a data problem, not a mailing list. */
const MAX_RECIPIENTS = 50;

export interface ResolvedRecipients {
  to: string[];
  /** Values at `toFields` that were not e-mail addresses (or beyond the limit). */
  skipped: number;
}

/** Collects `to` and the addresses at `toFields`, case-insensitively deduplicated. */
export function resolveRecipients(
  destination: Pick<EmailDestination, "to" | "toFields">,
  event: GatewayEvent,
): ResolvedRecipients {
  const seen = new Set<string>();
  const to: string[] = [];
  let skipped = 0;
  const add = (address: string) => {
    const key = address.toLowerCase();
    if (seen.has(key)) return;
    if (to.length >= MAX_RECIPIENTS) {
      skipped++;
      return;
    }
    seen.add(key);
    to.push(address);
  };
  for (const address of destination.to) add(address);
  for (const path of destination.toFields) {
    for (const value of collectEventPath(event, path).flat()) {
      if (value === undefined || value === null) continue;
      const address = typeof value === "string" ? value.trim() : value;
      if (v.is(EmailAddressSchema, address)) add(address);
      else skipped++;
    }
  }
  return { to, skipped };
}
