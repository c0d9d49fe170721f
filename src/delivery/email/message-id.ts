/**
 * Message-IDs derived from the event: `<{eventId}.{destinationId}@{domain}>`. Every attempt and
 * every replay of one event to one destination carries the same Message-ID, so mail clients
 * and consumers recognise a repeat; two email destinations receiving the same event still send
 * distinct messages.
 */

/** Keeps only characters valid in an RFC 5322 dot-atom (the ids are already of this shape). */
function atom(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, "-");
}

/** The Message-ID of `eventId` sent to `destinationId`, with angle brackets. */
export function deriveMessageId(eventId: string, destinationId: string, domain: string): string {
  return `<${atom(eventId)}.${atom(destinationId)}@${domain}>`;
}
