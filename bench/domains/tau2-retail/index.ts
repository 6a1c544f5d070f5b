import { join } from "node:path";
import { MentorError } from "../../../src/errors/index.js";
import { shippedPolicy } from "../../paths.js";
import type { Tables } from "../tau2-shared/database.js";
import { type Action, type TaskCall, tau2Domain } from "../tau2-shared/domain.js";
import { readJson } from "../tau2-shared/tools.js";
import { retailAccount, retailCatalogue, retailTools } from "./tools.js";

/** tau2's retail domain: orders, exchanges and returns over `tau2/retail/db.json`. */
export const tau2Retail = tau2Domain({
  name: "tau2-retail",
  folder: "retail",
  v1ToolsFile: join("tau-bench-v1", "retail_tools.json"),
  policyPath: shippedPolicy("tau2-retail"),
  loadTables: (dataDir) => {
    const file = join(dataDir, "tau2", "retail", "db.json");
    const tables = readJson(file) as Tables;
    for (const table of ["users", "orders", "products"]) {
      if (typeof tables?.[table] !== "object") {
        throw new MentorError("MNT_ERR_BENCH_DATA", `${file} has no table ${table}`);
      }
    }
    return tables;
  },
  handlers: retailTools,
  account: retailAccount,
  catalogue: retailCatalogue,
  requests: retailRequests,
  openingCall: { name: "opening", field: "text" },
});

/** The request kind each retail write carries out (policy.yaml `task`). */
const requestOfWrite: Record<string, string> = {
  cancel_pending_order: "request_cancel",
  return_delivered_order_items: "request_return",
  exchange_delivered_order_items: "request_item_change",
  modify_pending_order_items: "request_item_change",
  modify_pending_order_address: "request_address_change",
  modify_pending_order_payment: "request_payment_change",
  modify_user_address: "request_user_address_change",
};

/**
 * Oracle grounding: one request per successful reference write, on the order (or user) it
 * writes; a cancellation carries the reason the reference gives.
 */
export function retailRequests(writes: readonly Action[]): TaskCall[] {
  return writes.flatMap((write): TaskCall[] => {
    const name = requestOfWrite[write.name];
    if (!name) return [];
    if (name === "request_user_address_change")
      return [{ name, arguments: { user_id: write.arguments.user_id } }];
    const order = { order_id: write.arguments.order_id };
    return [
      { name, arguments: name === "request_cancel" ? { ...order, reason: write.arguments.reason } : order },
    ];
  });
}
