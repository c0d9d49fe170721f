/** The live hub conformance suite against the in-process hub driver. */
import { inProcessHub } from "../../../adapters/hub/in-process.ts";
import { testHubDriver } from "../../conformance/hub-conformance.ts";

testHubDriver("in-process", { open: () => inProcessHub(undefined) });
