/** The store conformance suite against the memory driver. */
import { memoryStore } from "../../../adapters/store/memory.ts";
import { testStoreDriver } from "../../conformance/store-conformance.ts";

testStoreDriver("memory", ({ now, services }) => memoryStore({ now, services }));
