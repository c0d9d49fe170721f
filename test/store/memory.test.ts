/** The store conformance suite against the memory driver. */
import { memoryStore } from "../../adapters/store/memory.ts";
import { describeStoreConformance } from "./conformance.ts";

describeStoreConformance("memory", ({ now }) => memoryStore({ now }));
