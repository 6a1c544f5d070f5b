export { type ChatRequest, checkToolsAgainstPolicy, RequestError, readChatRequest } from "./request.js";
export { errorResponse, policyFile, type RunningServer, type ServerOptions, startServer } from "./server.js";
