/**
 * Work over the event log in slices (docs/filters.md#replay): a loop that evaluates filters over
 * stored events calls `pause()` as it goes; once the current slice has run `sliceMs`, the pause
 * lets the event loop run (other requests, `/healthz`, deliveries) before the loop continues. An
 * `await` alone does not: a store that answers synchronously resolves in the same turn.
 */

/** How long one slice of work runs before it lets the event loop run, ms. */
export const SLICE_MS = 10;

/** A pause that yields to the event loop when the current slice has run `sliceMs`. */
export type SlicePause = () => Promise<void>;

/** Creates the pause of one piece of work. */
export function createSlicer(sliceMs: number = SLICE_MS): SlicePause {
  let started = performance.now();
  return async () => {
    if (performance.now() - started < sliceMs) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    started = performance.now();
  };
}
