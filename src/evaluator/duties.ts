import type { CandidateCall, StrategyTemplate } from "../game/index.js";
import type { Binding, Run } from "../run/index.js";
import type { BindingTexts } from "./findings.js";
import { requestedWays } from "./requested.js";
import type { Advice, Duty, ProposedCall } from "./types.js";

/** What duties ask of the advisor (advice.ts): a call's arguments filled, and the call to make toward a call. */
export interface DutyCalls {
  fill(run: Run, call: ProposedCall, bindings: readonly Binding[]): { call: ProposedCall; missing: string[] };
  toward(run: Run, call: ProposedCall, bindings: readonly Binding[]): Advice | undefined;
}

/** An open duty, the instance it is of, and whether its `fulfil` goes toward the way its request asked for. */
interface OpenDuty {
  duty: Duty;
  instance: number;
  towardAsked: boolean;
}

/** The calls toward the ways requests asked for, the duty instances they serve, and the other open instances. */
export interface AskedSteps {
  steps: ProposedCall[];
  instances: Set<number>;
  others: Set<number>;
}

/**
 * Open duties: enforced rule instances that do not accept, each with a call that helps if one is
 * known. Kept per template and beliefs array (every blocked call on a run asks for the run's
 * own); callers get their own copies.
 */
export class Duties {
  // Keyed by template, then beliefs array (runs and templates are never changed once built): an entry lives as long as both.
  private readonly byTemplate = new WeakMap<StrategyTemplate, WeakMap<readonly Int32Array[], OpenDuty[]>>();

  constructor(
    private readonly texts: BindingTexts,
    private readonly calls: DutyCalls,
  ) {}

  /**
   * Open duties at `beliefs`, states of `template`'s instances: those of its run, or (with
   * `runAt`, the run they are the beliefs of) those after a call allowed on it.
   */
  at(template: StrategyTemplate, beliefs: readonly Int32Array[], runAt?: () => Run): Duty[] {
    return this.openAt(template, beliefs, runAt).map(({ duty }) => ({
      ...duty,
      ...(duty.missing ? { missing: [...duty.missing] } : {}),
    }));
  }

  /**
   * On `template`'s run: the calls the open duties make toward the ways their requests asked for
   * while those are possible (the lookup an asked-for change of major needs first), and the duty
   * instances they serve.
   */
  askedSteps(template: StrategyTemplate): AskedSteps {
    const open = this.openAt(template, template.run.beliefs);
    const asked = open.filter((entry) => entry.towardAsked);
    return {
      steps: asked.flatMap(({ duty }) => (duty.fulfil ? [duty.fulfil] : [])),
      instances: new Set(asked.map(({ instance }) => instance)),
      others: new Set(open.filter((entry) => !entry.towardAsked).map(({ instance }) => instance)),
    };
  }

  private openAt(template: StrategyTemplate, beliefs: readonly Int32Array[], runAt?: () => Run): OpenDuty[] {
    const byBeliefs = this.byTemplate.get(template) ?? new WeakMap<readonly Int32Array[], OpenDuty[]>();
    this.byTemplate.set(template, byBeliefs);
    let duties = byBeliefs.get(beliefs);
    if (!duties) {
      duties = this.open(template, beliefs, beliefs === template.run.beliefs ? template.run : runAt?.());
      byBeliefs.set(beliefs, duties);
    }
    return duties;
  }

  private open(template: StrategyTemplate, beliefs: readonly Int32Array[], run: Run | undefined): OpenDuty[] {
    const duties: OpenDuty[] = [];
    const helpers = template.helpingCandidates();
    template.run.instances.forEach((instance, index) => {
      if (instance.rule.mode === "record") return;
      const open = beliefs.find((belief) => !instance.rule.automaton.isAccepting(belief[index] as number));
      if (!open) return;
      const duty: Duty = {
        rule: instance.rule.id,
        sentence: instance.rule.sentence,
        colour: instance.rule.automaton.colour(open[index] as number),
      };
      Object.assign(duty, this.texts.field(instance.bindings));
      // The way the request asked for while it is possible (the dispense of a refill request, or
      // the step that unblocks it); else a progressing call on the duty's own bindings (it may
      // touch the rule only later, like a distance check before the booking that fulfils "book
      // the trip"). Filled like advice: the call the prompt shield names and the token shield
      // redirects to is one the agent can make.
      const candidates = helpers[index] as CandidateCall[];
      const asked = requestedWays(template.run.policy, instance, index, candidates);
      const toward = run && asked.length > 0 ? this.towardAsked(run, asked) : undefined;
      const fulfil = toward ? undefined : template.firstProgressing(open, candidates);
      const filled =
        toward ??
        (fulfil &&
          this.calls.fill(
            run ?? template.run,
            { name: fulfil.tool, arguments: fulfil.arguments },
            fulfil.bindings,
          ));
      if (filled) {
        duty.fulfil = filled.call;
        if (filled.missing?.length) duty.missing = filled.missing;
      }
      duties.push({ duty, instance: index, towardAsked: toward !== undefined });
    });
    return duties;
  }

  /** The first asked-for way that is still possible: itself where allowed, else the step that unblocks it. */
  private towardAsked(run: Run, asked: readonly CandidateCall[]): Advice | undefined {
    for (const way of asked) {
      const toward = this.calls.toward(run, { name: way.tool, arguments: way.arguments }, way.bindings);
      if (toward) return toward;
    }
    return undefined;
  }
}
