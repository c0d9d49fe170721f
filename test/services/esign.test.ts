/** The service conformance suite against the e-sign module. */
import { esignService } from "../../src/services/esign/esign-service.ts";
import { testUpstreamService } from "../conformance/service-conformance.ts";

testUpstreamService(esignService);
