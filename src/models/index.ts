export { type CacheRecord, modelsDirectory, sha256File } from "./cache.js";
export { type TinyModelFamily, tinyModelFamilies } from "./family-tokenizer.js";
export {
  type GgmlType,
  type GgufMetadataValue,
  type GgufScalarType,
  type GgufTensor,
  GgufWriter,
  ggmlTypes,
  ggufValueTypes,
} from "./gguf-writer.js";
export { type ListedModel, type ListModelsOptions, listModels } from "./list.js";
export {
  type FetchAttempt,
  formatBytes,
  formatDuration,
  ModelFetchError,
  type ModelSpec,
  type PulledModel,
  type PullOptions,
  type PullProgressEvent,
  parseModelSpec,
  pullModel,
  type ResolveModelOptions,
  resolveModel,
} from "./pull.js";
export {
  type ChatFormat,
  chatFormats,
  describePackages,
  describeSource,
  findModel,
  loadRegistry,
  type ModelEntry,
  type ModelRegistry,
  type ModelSource,
  parseRegistry,
} from "./registry.js";
export {
  familyArchitectures,
  makeTinyModel,
  type TinyModelOptions,
  type TinyModelSummary,
} from "./tiny-model.js";
