/** A minimal Server-Sent Events reader over fetch for the filter tests: event ids as they arrive. */
export async function readSse(url: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  if (response.status !== 200) throw new Error(`SSE answered ${response.status}: ${await response.text()}`);
  const events: string[] = [];
  let waiters: (() => void)[] = [];
  const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) return;
        buffer += chunk.value;
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trim())
            .join("\n");
          if (data) {
            const frame = JSON.parse(data) as { event?: { id?: string } };
            if (frame.event?.id) events.push(frame.event.id);
            for (const wake of waiters.splice(0)) wake();
          }
          end = buffer.indexOf("\n\n");
        }
      }
    } catch {}
  })();
  return {
    ids: () => [...events],
    async waitFor(id: string, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!events.includes(id)) {
        if (Date.now() > deadline) throw new Error(`SSE: timed out waiting for ${id}; got ${events.join(",")}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadline - Date.now());
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close() {
      waiters = [];
      controller.abort();
    },
  };
}
