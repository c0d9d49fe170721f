/** Runs the outbox conformance suite against the memory driver. */
import { memoryOutbox } from "../../../adapters/outbox/memory.ts";
import { testOutboxDriver } from "../../conformance/outbox-conformance.ts";

testOutboxDriver("memory", { open: async () => memoryOutbox() });
