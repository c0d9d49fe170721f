/** The service conformance suite against the staffing module. */
import { staffingService } from "../../src/services/staffing/staffing-service.ts";
import { testUpstreamService } from "../conformance/service-conformance.ts";

testUpstreamService(staffingService);
