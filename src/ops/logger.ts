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
  const log = (lvl: Exclude<LogLevel, "silent">) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

const SECRET_HEADERS = new Set(["x-svc-signature", "authorization", "cookie", "proxy-authorization", "x-api-key"]);

/** Lower-cased copy of the headers with signature and credential headers redacted. */
export function redactHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = SECRET_HEADERS.has(name) ? "[redacted]" : value;
  });
  return out;
}
