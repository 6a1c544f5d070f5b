import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../../src/errors/index.js";
import type { Tables } from "../tau2-shared/database.js";
import { tau2Domain } from "../tau2-shared/domain.js";
import { readJson } from "../tau2-shared/tools.js";
import { retailAccount, retailCatalogue, retailTools } from "./tools.js";

/** tau2's retail domain: orders, exchanges and returns over `tau2/retail/db.json`. */
export const tau2Retail = tau2Domain({
  name: "tau2-retail",
  folder: "retail",
  v1ToolsFile: join("tau-bench-v1", "retail_tools.json"),
  policyPath: fileURLToPath(new URL("../../../../bench/domains/tau2-retail/policy.yaml", import.meta.url)),
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
});
