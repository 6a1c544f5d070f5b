import Fastify, { type FastifyInstance } from "fastify";
import { MentorError } from "../errors/index.js";
import { type DashboardOptions, dashboardRoutes } from "./routes.js";

/**
 * The dashboard alone (`mentor dashboard`): its pages under `/dashboard`, `/` sending there; not
 * listening. Errors answer as JSON `{error: {message, code}}` with the code's status.
 */
export async function buildDashboard(
  options: DashboardOptions & { logger?: boolean },
): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false, forceCloseConnections: true });
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof MentorError)
      return reply.status(error.status).send({ error: { message: error.message, code: error.code } });
    return reply.status(500).send({ error: { message: (error as Error).message, code: null } });
  });
  app.get("/", async (_request, reply) => reply.redirect("/dashboard/"));
  await app.register(dashboardRoutes, { ...options, prefix: "/dashboard" });
  return app;
}
