/**
 * Structured JSON logs, one object per line. Callers pass fields, never bodies or secrets;
 * `redactHeaders` is the one place that decides which received headers may be kept.
 */

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Creates a logger writing JSON lines through `write` (default: console.log). */
export function createLogger(level: LogLevel, write: (line: string) => void = console.log): Logger {
  const min = RANK[level];
  // The line is assembled from parts (no merged copy of the fields), and the timestamp is
  // formatted once per millisecond: hot paths log a line per request.
  let lastMs = -1;
  let lastTime = "";
  const log = (lvl: Exclude<LogLevel, "silent">) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    const ms = Date.now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastTime = new Date(ms).toISOString();
    }
    const head = `{"time":"${lastTime}","level":"${lvl}","msg":${JSON.stringify(msg)}`;
    const rest = fields ? JSON.stringify(fields) : "{}";
    write(rest === "{}" ? `${head}}` : `${head},${rest.slice(1)}`);
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

const SECRET_HEADERS = new Set(["x-svc-signature", "authorization", "cookie", "proxy-authorization", "x-api-key"]);

/**
 * Lower-cased copy of the headers with signature and credential headers redacted. Takes a
 * `Headers` or a lower-cased record of them (`GatewayContext.listHeaders`), which it redacts in place.
 */
export function redactHeaders(headers: Headers | Record<string, string>): Record<string, string> {
  if (!(headers instanceof Headers)) {
    for (const name in headers) if (SECRET_HEADERS.has(name)) headers[name] = "[redacted]";
    return headers;
  }
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = SECRET_HEADERS.has(name) ? "[redacted]" : value;
  });
  return out;
}
