import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MentorError } from "../../../src/errors/index.js";
import type { Row, Tables } from "../tau2-shared/database.js";
import { tau2Domain } from "../tau2-shared/domain.js";
import { readJson } from "../tau2-shared/tools.js";
import { airlineAccount, airlineCatalogue, airlineTools } from "./tools.js";

/** tau2's airline domain: bookings, changes and cancellations over tau-bench v1's airline database. */
export const tau2Airline = tau2Domain({
  name: "tau2-airline",
  folder: "airline",
  v1ToolsFile: join("tau-bench-v1", "airline", "tools.json"),
  policyPath: fileURLToPath(new URL("../../../../bench/domains/tau2-airline/policy.yaml", import.meta.url)),
  loadTables: airlineTables,
  handlers: airlineTools,
  account: airlineAccount,
  catalogue: airlineCatalogue,
});

/**
 * tau2's airline database, built from tau-bench v1's `flights.json`, `reservations.json` and
 * `users.json` (tables keyed by flight number, reservation id and user id); v1's users lack
 * tau2's `user_id` field, which is filled in from the key.
 */
export function airlineTables(dataDir: string): Tables {
  const tables: Tables = {};
  for (const table of ["flights", "reservations", "users"]) {
    const file = join(dataDir, "tau-bench-v1", "airline", `${table}.json`);
    const rows = readJson(file);
    if (typeof rows !== "object" || rows === null || Array.isArray(rows)) {
      throw new MentorError("MNT_ERR_BENCH_DATA", `${file} must be an object of records by id`);
    }
    tables[table] = rows as Record<string, Row>;
  }
  for (const [id, user] of Object.entries(tables.users ?? {})) {
    if (user.user_id === undefined) tables.users = { ...tables.users, [id]: { user_id: id, ...user } };
  }
  return tables;
}
