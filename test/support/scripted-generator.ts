import type { Generation, GenerationRequest, TurnGenerator } from "../../src/agent/index.js";

/** One scripted generation: an answer, or calls by name and arguments. */
export type Step = string | { calls: { name: string; arguments: Record<string, unknown> }[] };

/**
 * A turn generator that answers from a script instead of a model, one step per generation (the
 * last step repeats), and keeps every request it got. `hold` makes each generation wait until
 * released (for queue tests).
 */
export class ScriptedGenerator implements TurnGenerator {
  readonly tokenShield = false;
  readonly requests: GenerationRequest[] = [];
  private held: (() => void)[] = [];

  constructor(
    private readonly steps: readonly Step[],
    private readonly options: { hold?: boolean } = {},
  ) {}

  async generate(request: GenerationRequest): Promise<Generation> {
    const step = this.steps[Math.min(this.requests.length, this.steps.length - 1)] ?? "";
    this.requests.push(request);
    if (this.options.hold)
      await new Promise<void>((resolve, reject) => {
        this.held.push(resolve);
        request.signal?.addEventListener("abort", () => reject(request.signal?.reason), { once: true });
      });
    const usage = { promptTokens: 10, completionTokens: 5 };
    if (typeof step === "string") return { content: step, toolCalls: [], finishReason: "stop", usage };
    return { content: null, toolCalls: step.calls, finishReason: "tool_calls", usage };
  }

  /** Lets every held generation finish. */
  release(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }
}
