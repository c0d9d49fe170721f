/**
 * What erasure (src/lifecycle/erase-events.ts) leaves of a delivery record of an erased event:
 * ids, states, times, status codes, stable failure codes and transform versions stay (what the
 * operator needs to read the delivery's history); the free texts that may quote the event (an
 * attempt's error, a transform's console lines, the last error) are replaced or dropped.
 */
import type { DeliveryAttempt, DeliveryRecord } from "./outbox-contract.ts";

/** What replaces an error text that may have quoted an erased event. */
export const ERASED_TEXT = "(erased with the event)";

/** The reason deliveries of an erased event are cancelled with (and a tombstone's attempts end with). */
export const ERASED_CANCEL = "cancelled: the event was erased";

/** True when `record` still holds a free text erasure removes. */
export function holdsEventText(record: DeliveryRecord): boolean {
  if (record.lastError !== undefined && record.lastError !== ERASED_CANCEL && record.lastError !== ERASED_TEXT)
    return true;
  return record.attempts.some(
    (a) => a.logs !== undefined || (a.error !== undefined && a.error !== ERASED_CANCEL && a.error !== ERASED_TEXT),
  );
}

/** The free texts of `record` (attempt errors and log lines, the last error), to find their copies elsewhere. */
export function eventTexts(record: DeliveryRecord): string[] {
  const texts: string[] = [];
  for (const attempt of record.attempts) {
    if (attempt.error !== undefined) texts.push(attempt.error);
    if (attempt.logs) texts.push(...attempt.logs);
  }
  if (record.lastError !== undefined) texts.push(record.lastError);
  return texts.filter((t) => t !== ERASED_CANCEL && t !== ERASED_TEXT);
}

function scrubAttempt(attempt: DeliveryAttempt): DeliveryAttempt {
  const { logs: _logs, error, ...kept } = attempt;
  if (error === undefined) return kept;
  return { ...kept, error: error === ERASED_CANCEL ? error : ERASED_TEXT };
}

/** `record` without the texts that may quote its event (the same object when it holds none). */
export function scrubDelivery(record: DeliveryRecord): DeliveryRecord {
  if (!holdsEventText(record)) return record;
  const { lastError, ...rest } = record;
  const scrubbed: DeliveryRecord = { ...rest, attempts: record.attempts.map(scrubAttempt) };
  if (lastError !== undefined) scrubbed.lastError = lastError === ERASED_CANCEL ? lastError : ERASED_TEXT;
  return scrubbed;
}
