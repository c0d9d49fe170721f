/** The store conformance suite against the memory driver. */
import { createMemoryStore } from "../../adapters/store/memory.ts";
import { describeStoreConformance } from "./conformance.ts";

describeStoreConformance("memory", ({ now }) => createMemoryStore({ now }));
