/**
 * `SIGHUP` re-reads the configuration file and applies it without a restart (docs/configuration.md
 * "Reloading"): the file is validated first (an invalid one is refused with one `error` line and
 * the running configuration stays), settings that apply only at start are refused by name, and
 * one line says what changed (ids and field names, never values). Reloads run one at a time; a
 * signal during a reload runs one more afterwards. Zero-config mode has no file: it says so.
 */
import { ConfigError } from "../../src/config/resolve-config.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";
import type { Logger } from "../../src/ops/logger.ts";
import type { RunningGateway } from "./start-gateway.ts";

/** Reads and validates the file as `serve` does at start (the one place a reload checks a file). */
export type ReadConfig = (path: string) => Promise<GatewayConfig>;

export function reloadOnSignal(
  running: Pick<RunningGateway, "reload">,
  logger: Logger,
  path: string | undefined,
  readConfig: ReadConfig,
): () => Promise<void> {
  let busy: Promise<void> | undefined;
  let again = false;

  const reloadOnce = async () => {
    if (path === undefined) {
      logger.warn("reload: no configuration file to reload (zero-config mode); nothing changed", {
        signal: "SIGHUP",
      });
      return;
    }
    let next: GatewayConfig;
    try {
      next = await readConfig(path);
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : [String(error)];
      logger.error("reload refused: invalid configuration; the running configuration stays", { file: path, problems });
      return;
    }
    const outcome = await running.reload(next);
    const { changes } = outcome;
    if (!outcome.ok) {
      logger.error("reload refused: settings that apply only at start changed; restart to change them", {
        file: path,
        settings: changes.fixed,
      });
      return;
    }
    const kept = Object.fromEntries(Object.entries(outcome.kept).filter(([, count]) => count > 0));
    const fields = {
      file: path,
      ...changes.lists,
      ...(changes.settings.length > 0 ? { settings: changes.settings } : {}),
      ...(Object.keys(kept).length > 0 ? { keptDeliveries: kept } : {}),
    };
    // Unfinished deliveries of a removed destination are worth a look: the line is a warning then.
    if (Object.keys(kept).length > 0) {
      logger.warn("configuration reloaded; removed destinations left unfinished deliveries in the outbox", fields);
    } else logger.info(changes.none ? "configuration reloaded: no change" : "configuration reloaded", fields);
  };

  const run = (): Promise<void> => {
    if (busy) {
      again = true;
      return busy;
    }
    busy = (async () => {
      do {
        again = false;
        await reloadOnce().catch((error: unknown) =>
          logger.error("reload failed; the running configuration stays", { error: String(error) }),
        );
      } while (again);
      busy = undefined;
    })();
    return busy;
  };
  process.on("SIGHUP", () => void run());
  return run;
}
