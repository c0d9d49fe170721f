/**
 * A log line writer for Node that batches lines written in the same tick into one
 * `process.stdout.write` (console.log formats and writes each line on its own, which costs more
 * than the rest of a webhook's handling). Flushed on exit so no line is lost.
 */

export interface LogWriter {
  (line: string): void;
  flush(): void;
}

export function createStdoutLogWriter(stream: NodeJS.WritableStream = process.stdout): LogWriter {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = `${pending.join("\n")}\n`;
    pending = [];
    stream.write(chunk);
  };
  const write = ((line: string) => {
    pending.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  }) as LogWriter;
  write.flush = flush;
  process.once("exit", flush);
  return write;
}
