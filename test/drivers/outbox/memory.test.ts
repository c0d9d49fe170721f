/** Runs the outbox conformance and lease suites against the memory driver. */
import { memoryOutbox } from "../../../adapters/outbox/memory.ts";
import { testOutboxDriver } from "../../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../../conformance/outbox-lease-conformance.ts";

testOutboxDriver("memory", { open: async () => memoryOutbox() });
testOutboxLeases("memory", { open: async () => memoryOutbox() });
