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

/** Sets the exit code, waits until stdout and stderr are written out, then exits. */
export async function exitAfterOutput(code: number): Promise<never> {
  process.exitCode = code;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}
