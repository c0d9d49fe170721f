/**
 * The outbox conformance and lease suites against the `upstash` driver, through an Upstash REST
 * front in front of a real redis-server.
 */
import { upstashOutbox } from "../../../adapters/outbox/upstash.ts";
import type { OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { type OutboxHarness, testOutboxDriver } from "../../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../../conformance/outbox-lease-conformance.ts";
import { upstashFrontForFile } from "../../helpers/upstash-server.ts";

const front = upstashFrontForFile();
let n = 0;
const prefixOf = new WeakMap<OutboxStore, string>();

const open = async (prefix: string) => {
  const outbox = await upstashOutbox({ url: front().url, token: front().token, prefix });
  prefixOf.set(outbox, prefix);
  return outbox;
};
const harness: OutboxHarness = {
  open: () => open(`uo${++n}`),
  async reopen(outbox) {
    await outbox.close();
    return open(prefixOf.get(outbox) as string);
  },
};

testOutboxDriver("upstash", harness);
testOutboxLeases("upstash", harness);
