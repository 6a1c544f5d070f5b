#!/usr/bin/env node
import { Command } from "commander";
import { MentorError } from "../errors/index.js";
import { registerChatCommands } from "./chat.js";
import { registerDashboardCommand } from "./dashboard.js";
import { registerFormalizeCommand } from "./formalize.js";
import { registerGroundCommand } from "./ground.js";
import { registerInitCommand } from "./init.js";
import { registerLtlCommands } from "./ltl.js";
import { registerModelCommands } from "./models.js";
import { registerPolicyCommands } from "./policy.js";
import { registerServeCommand } from "./serve.js";

const program = new Command()
  .name("mentor")
  .description("A local inference server that makes tool-using LLM agents follow procedural manuals.")
  .version("0.1.0")
  .showHelpAfterError();

registerLtlCommands(program);
registerInitCommand(program);
registerPolicyCommands(program);
registerGroundCommand(program);
registerFormalizeCommand(program);
registerModelCommands(program);
registerChatCommands(program);
registerServeCommand(program);
registerDashboardCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof MentorError) {
    process.stderr.write(`mentor: ${error.code}: ${error.message}\n`);
    process.exitCode = 2;
  } else {
    throw error;
  }
}
