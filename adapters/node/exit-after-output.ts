/**
 * Exits the process once what it wrote has left it. On POSIX, stdout and stderr connected to a
 * pipe are asynchronous (Node's "A note on process I/O"): a write the pipe cannot take at once
 * (its reader is slow, the message is long) waits in the stream, and `process.exit()` drops it.
 * The CLI's last line (why it stops, exit 1 or 64) must reach the operator or the supervisor
 * reading its pipe, so every exit that follows output waits for both streams first.
 */

/** Resolves once everything written to `stream` so far has been handed to the OS (or the stream failed). */
export function flushed(stream: NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean }) {
  return new Promise<void>((resolve) => {
    if (stream.destroyed || !stream.writableLength) return resolve();
    // A write's callback runs after every earlier write: an empty one marks the end of the queue.
    stream.write("", () => resolve());
  });
}

/** How long an exit waits for a reader that does not read at all (a pipe held open, never drained). */
export const FLUSH_BOUND_MS = 10_000;

/**
 * Sets the exit code, waits until stdout and stderr are written out (at most `FLUSH_BOUND_MS`),
 * then exits.
 */
export async function exitAfterOutput(code: number): Promise<never> {
  process.exitCode = code;
  const bound = new Promise<void>((resolve) => setTimeout(resolve, FLUSH_BOUND_MS).unref());
  await Promise.race([Promise.all([flushed(process.stdout), flushed(process.stderr)]), bound]);
  process.exit(code);
}
