import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MentorError } from "../errors/index.js";
import { Evaluator, type EvaluatorOptions } from "../evaluator/index.js";
import { loadPolicy, type Policy, policyForSystem } from "../policy/index.js";
import { RequestError } from "./request.js";

const domainsDirectory = fileURLToPath(new URL("../../../policies/", import.meta.url));

/** A policy id (a domain shipped with mentor) or a path → the policy file. */
export function policyFile(idOrPath: string): string {
  if (/[/\\]|\.ya?ml$/.test(idOrPath)) return idOrPath;
  const file = `${domainsDirectory}${idOrPath}/policy.yaml`;
  if (existsSync(file)) return file;
  const known = existsSync(domainsDirectory)
    ? readdirSync(domainsDirectory).filter((name) => existsSync(`${domainsDirectory}${name}/policy.yaml`))
    : [];
  throw new MentorError(
    "MNT_ERR_POLICY_UNKNOWN",
    `no policy ${JSON.stringify(idOrPath)}; shipped policies: ${known.join(", ") || "none"} (or give a path)`,
  );
}

export interface PolicyEntry {
  policy: Policy;
  evaluator: Evaluator;
}

/** The server's policies, each known by its name and by the id or path it was loaded by. */
export class PolicySet {
  private readonly entries = new Map<string, PolicyEntry>();
  /** The policy of requests that name none. */
  readonly fallback: PolicyEntry | undefined;

  constructor(
    ids: readonly string[],
    private readonly evaluatorOptions: EvaluatorOptions = {},
  ) {
    for (const id of ids) {
      const policy = loadPolicy(policyFile(id));
      const entry = { policy, evaluator: new Evaluator(policy, evaluatorOptions) };
      this.entries.set(policy.name, entry);
      this.entries.set(id, entry);
    }
    this.fallback = ids[0] !== undefined ? this.entries.get(ids[0]) : undefined;
  }

  get all(): Policy[] {
    return [...new Set([...this.entries.values()].map((entry) => entry.policy))];
  }

  get ids(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * The policy a request names (`mentor.policy`), or the default one, as the conversation's system
   * prompt sets it (its settings, docs/policy.md): each variant has its own evaluator.
   */
  select(id: string | undefined, system?: string): PolicyEntry | undefined {
    const entry = id === undefined ? this.fallback : this.entries.get(id);
    if (!entry && id !== undefined)
      throw new RequestError(
        "mentor.policy",
        `no policy ${JSON.stringify(id)}; this server loaded ${this.all.map((policy) => policy.name).join(", ") || "none"}`,
        "MNT_ERR_POLICY_UNKNOWN",
      );
    if (!entry) return undefined;
    const policy = policyForSystem(entry.policy, system);
    if (policy === entry.policy) return entry;
    let variant = this.variants.get(policy);
    if (!variant) {
      variant = { policy, evaluator: new Evaluator(policy, this.evaluatorOptions) };
      this.variants.set(policy, variant);
    }
    return variant;
  }

  private readonly variants = new WeakMap<Policy, PolicyEntry>();
}
