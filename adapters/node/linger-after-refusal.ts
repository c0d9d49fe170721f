/**
 * A staged close after a refused request body
 * (docs/security-and-deployment.md#what-protects-what), for the Node server. The
 * gateway answers a body past its limit with 413 and `Connection: close` while the client may
 * still be writing it. Node closes such a socket as soon as the answer is written; bytes of the
 * body that arrive after that make the kernel reset the connection, and a client that writes
 * again before it read the answer gets EPIPE and never sees the 413.
 *
 * So the close is done in stages: the answer and a FIN go out, then the rest of the body is read
 * and thrown away (no buffering) until the client ends it or closes, or for at most `LINGER_MS`
 * after the answer and `LINGER_BYTES` in all, whichever comes first; then the socket is destroyed.
 * A hostile client holds the socket at most that long more, within the per-address cap
 * (connection-limits.ts).
 *
 * The byte bound must be larger than what the two ends' socket buffers can hold together. A
 * client that writes from its write callbacks (Node's http client does) can fill its send buffer
 * and the gateway's receive buffer without once going back to read; if the gateway resets the
 * connection after discarding less than that, the client's next write fails and it never reads
 * the 413 that sits in its receive buffer. Linux autotunes a receive buffer up to
 * `net.ipv4.tcp_rmem`'s maximum (32 MiB on Debian 12) and a send buffer up to `tcp_wmem`'s (4 MiB),
 * so 64 MiB covers both with room. Discarding 64 MiB costs a few tens of milliseconds of CPU and
 * no memory; the time bound (nginx's `lingering_timeout` is the same 5 s) ends a slower client.
 */
import type { IncomingMessage } from "node:http";

/** How long the rest of a refused body is read after the answer went out, ms. */
export const LINGER_MS = 5000;
/** How many bytes of a refused body are read and thrown away, at most. */
export const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * Reads and discards what is left of `req`'s body, and makes Node's close after the answer a
 * staged one (half-close, then destroy when the client is done or a bound is reached).
 */
export function lingerAfterRefusal(req: IncomingMessage, limits = { ms: LINGER_MS, bytes: LINGER_BYTES }): void {
  const socket = req.socket;
  if (!socket || socket.destroyed) return;
  const destroySoon = socket.destroySoon;
  let discarded = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const destroy = () => socket.destroy();

  req.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limits.bytes) destroy();
  });
  // The client finished the body: nothing is left to arrive, so Node's own close is right.
  req.once("end", () => {
    socket.destroySoon = destroySoon;
    if (socket.writableEnded) destroySoon.call(socket);
  });
  socket.once("close", () => clearTimeout(timer));
  req.resume();

  // Called by Node's HTTP server once an answer with `Connection: close` is written.
  socket.destroySoon = () => {
    socket.end();
    timer = setTimeout(destroy, limits.ms);
  };
}
