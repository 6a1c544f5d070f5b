import { fileURLToPath } from "node:url";
import { makeTinyModel } from "../../src/models/tiny-model.js";
import type { ChatMessage, ChatTool } from "../../src/openai/index.js";

/**
 * The travel domain for tests on a tiny model: tools whose cities are enums (so that the random
 * model's calls name the requested route) and a conversation whose task is grounded.
 */
export const travelPolicyFile = fileURLToPath(
  new URL("../../../policies/travel/policy.yaml", import.meta.url),
);

const city = { type: "string", enum: ["Toronto", "Chicago"] };

export function travelTool(name: string): ChatTool {
  return {
    type: "function",
    function: {
      name,
      description: `The ${name} tool.`,
      parameters: {
        type: "object",
        properties: { origin: city, destination: city },
        required: ["origin", "destination"],
      },
    },
  };
}

export const travelTools: ChatTool[] = [travelTool("check_distance"), travelTool("book_train")];

export const travelMessages: ChatMessage[] = [
  {
    role: "user",
    content: "Book me a train from Toronto to Chicago.",
    mentor: {
      task: [
        { name: "request_travel", arguments: { origin: "Toronto", destination: "Chicago", urgent: false } },
      ],
    },
  },
];

/**
 * A tiny Llama 3.1 model (random weights, real tokenizer). Seed 3 names both travel tools across
 * sampling seeds (seed 7 almost always writes book_train).
 */
export async function makeTravelModel(outputPath: string): Promise<string> {
  await makeTinyModel({ family: "llama3.1", outputPath, seed: 3 });
  return outputPath;
}
