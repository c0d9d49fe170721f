/** Runs the outbox conformance suite against the memory driver. */
import { createMemoryOutbox } from "../../adapters/store/memory-outbox.ts";
import { testOutboxStore } from "./outbox-conformance.ts";
import { testOutboxLeases } from "./outbox-lease-conformance.ts";

testOutboxStore("memory", { open: async () => createMemoryOutbox() });
testOutboxLeases("memory", { open: async () => createMemoryOutbox() });
