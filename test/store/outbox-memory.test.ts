/** Runs the outbox conformance suite against the memory driver. */
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import { testOutboxStore } from "./outbox-conformance.ts";

testOutboxStore("memory", { open: async () => memoryOutbox() });
