/**
 * Operational events (src/operational-events) may quote a failed attempt's error (`last_error` of
 * `gateway.destination.failing` and `gateway.deliveries.dead`), and an error may quote the event
 * the attempt carried (a transform's `cannot map <email>`). Each such event names the event whose
 * attempt gave that error (`last_event`); erasure (src/lifecycle/erase-events.ts) replaces the
 * text when that event, or the text itself, belongs to what it erased.
 */
import { ERASED_TEXT } from "../delivery/scrub-delivery.ts";

/** `data` with `last_error` replaced when it belongs to an erased event; undefined when unchanged. */
export function scrubOperationalData(
  data: Record<string, unknown>,
  erasedIds: ReadonlySet<string>,
  texts: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  const error = data.last_error;
  if (typeof error !== "string" || error === ERASED_TEXT) return undefined;
  const lastEvent = typeof data.last_event === "string" ? data.last_event : undefined;
  const events = Array.isArray(data.events) ? data.events : [];
  const quotes =
    texts.has(error) ||
    (lastEvent !== undefined && erasedIds.has(lastEvent)) ||
    // Recorded before `last_event` existed: the batch's events stand for it.
    (lastEvent === undefined && events.some((id) => typeof id === "string" && erasedIds.has(id)));
  return quotes ? { ...data, last_error: ERASED_TEXT } : undefined;
}
