/** `mentor/server`: the HTTP server and its dashboard (loads fastify). */
export { buildDashboard, type DashboardOptions, dashboardRoutes } from "./dashboard/index.js";
export {
  type Backend,
  buildServer,
  type RunningServer,
  type ServerControl,
  type ServerOptions,
  startServer,
} from "./server/index.js";
