import { fileURLToPath } from "node:url";
import { loadPolicy } from "../../src/policy/index.js";

/** The pharmacy-refill desk written from its manual (test/evaluator/fixtures/pharmacy.yaml). */
export const pharmacyPolicy = loadPolicy(
  fileURLToPath(new URL("../../../test/evaluator/fixtures/pharmacy.yaml", import.meta.url)),
);

/** Ada Byron's request to refill RX1003 for 30 days. */
export const refillRequest = {
  name: "request_refill",
  arguments: { name: "Ada Byron", date_of_birth: "1990-04-01", rx_id: "RX1003", days_supply: 30 },
};
