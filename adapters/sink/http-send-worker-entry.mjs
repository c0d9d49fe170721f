// The entry of the HTTP send thread (http-send-thread.ts). A process started with `--import tsx`
// passes it on to its workers and the TypeScript body loads as is; one that registered tsx in
// code (bin/gateway.js) does not, so register it here, for this thread only (the second import
// names the module anew: a failed import stays failed under its URL).
try {
  await import("./http-send-worker.ts");
} catch (error) {
  if (error?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw error;
  const { register } = await import("tsx/esm/api");
  register();
  await import("./http-send-worker.ts?registered");
}
