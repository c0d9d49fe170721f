// Preloaded (`node --import`) into the CLI by exit-flush.test.ts: the first time a write to
// stderr has to wait in the stream (the pipe is full: its reader has not read yet), it says
// "queued" on fd 3, synchronously. From then on only the event loop can write the rest: an
// immediate process.exit() drops it, an exit that waits for the stream does not.
import { writeSync } from "node:fs";

const write = process.stderr.write.bind(process.stderr);
let told = false;
process.stderr.write = (...args) => {
  const accepted = write(...args);
  if (!accepted && !told) {
    told = true;
    writeSync(3, "queued\n");
  }
  return accepted;
};
