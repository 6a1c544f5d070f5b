export { labelSchema, taskGrammar } from "./grammar.js";
export {
  type Grounder,
  type Grounding,
  type GroundingNote,
  Labeler,
  type LabelerOptions,
  ungroundedError,
} from "./labeler.js";
export type { LabelModel, ModelRequest } from "./model.js";
export { OpenAILabelModel, type OpenAILabelModelOptions } from "./openai-model.js";
