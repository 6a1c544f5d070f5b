import type { Grounder, TurnGenerator } from "../agent/index.js";
import type { FlightRecorder } from "../evaluator/index.js";
import type { Policy } from "../policy/index.js";
import type { SolverClient } from "../smt/index.js";
import type { Admission } from "./admission.js";
import type { Metrics } from "./metrics.js";
import type { ServerSettings } from "./options.js";
import type { PolicySet } from "./policies.js";

/** What answers the requests: a model (local or upstream) or any other turn generator. */
export interface Backend {
  generator: TurnGenerator;
  /** The id clients name the model by. */
  modelId: string;
  /** Requests answered at once unless the options say otherwise. */
  concurrency: number;
  /** The backend llama.cpp runs on (`cpu`, `cuda`, …), for `/health`. */
  gpu?: string;
  /** The grounder of a policy (the labeler with this backend's model, or the options' grounder). */
  grounder(policy: Policy): Grounder;
  /** Frees what the backend loaded. */
  close(): Promise<void>;
}

/** What the routes share. */
export interface ServerContext {
  readonly settings: ServerSettings;
  readonly policies: PolicySet;
  readonly metrics: Metrics;
  readonly recorder: FlightRecorder | undefined;
  readonly startedAt: number;
  /** Set once the backend is there; until then requests are answered 503. */
  /** `grounderOf`: the backend's grounder of a policy (or of a variant a system prompt made), made once. */
  serving: { backend: Backend; admission: Admission; grounderOf(policy: Policy): Grounder } | undefined;
  /** Z3 for argument repairs that candidate values cannot make, started on first need. */
  solver(): SolverClient;
}
