export { buildDashboard } from "./dashboard.js";
export {
  type ConversationPlace,
  conversations,
  countsOf,
  type FlightRecord,
  outcomesOf,
  RecordStore,
} from "./records.js";
export { DASHBOARD_KEY_COOKIE, type DashboardOptions, dashboardKey, dashboardRoutes } from "./routes.js";
export { type RunView, runView } from "./run-view.js";
