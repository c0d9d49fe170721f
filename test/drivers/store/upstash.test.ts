/**
 * The store conformance suite against the `upstash` driver, through an Upstash REST front in
 * front of a real redis-server (the same Lua scripts as the `redis` driver).
 */
import { upstashStore } from "../../../adapters/store/upstash/upstash-store.ts";
import { testStoreDriver } from "../../conformance/store-conformance.ts";
import { upstashFrontForFile } from "../../helpers/upstash-server.ts";

const front = upstashFrontForFile();
let n = 0;

testStoreDriver("upstash", ({ now, services }) =>
  upstashStore({ url: front().url, token: front().token, prefix: `u${++n}`, now, services }),
);
