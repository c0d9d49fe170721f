/**
 * The body of a streamed upstream answer as a Node stream, fed by the proxy's undici handler
 * (node-upstream-fetch.ts): chunks are pushed as undici parses them; when the reader's buffer is
 * full the handler pauses the upstream socket, and `_read` resumes it, so a large PDF moves at the
 * client's pace with bounded memory. Destroyed before its end (client gone, cancel), it aborts the
 * upstream call, which closes that connection instead of reading the rest.
 */
import { Readable } from "node:stream";

export interface UpstreamBodyControls {
  /** Resumes a paused upstream socket. */
  resume(): void;
  /** Aborts the upstream call (no-op once the body is complete). */
  abort(reason: Error): void;
}

/** A Readable over one upstream answer's body. */
export class UpstreamBodyStream extends Readable {
  readonly #controls: UpstreamBodyControls;

  constructor(controls: UpstreamBodyControls) {
    super({ highWaterMark: 64 * 1024 });
    this.#controls = controls;
    // A client gone mid-answer destroys the stream with an error; the pipe's owner handles it,
    // this keeps it from becoming an uncaught 'error' event.
    this.on("error", () => {});
  }

  override _read(): void {
    this.#controls.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.readableEnded) this.#controls.abort(error ?? new Error("upstream body closed before its end"));
    callback(error);
  }
}
