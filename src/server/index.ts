export { buildServer, type ServerControl } from "./app.js";
export type { Backend } from "./context.js";
export { errorResponse } from "./errors.js";
export type { ServerOptions } from "./options.js";
export { policyFile } from "./policies.js";
export { type ChatRequest, checkToolsAgainstPolicy, RequestError, readChatRequest } from "./request.js";
export { listen, type RunningServer, startServer } from "./server.js";
