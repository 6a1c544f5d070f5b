import { MentorError } from "../../src/errors/index.js";
import type { Domain } from "./domain.js";
import { tau2Airline } from "./tau2-airline/index.js";
import { tau2Mock } from "./tau2-mock/index.js";
import { tau2Retail } from "./tau2-retail/index.js";
import { travel } from "./travel/index.js";

/** The benchmark domains by name. */
export const domains: ReadonlyMap<string, Domain> = new Map(
  [travel, tau2Mock, tau2Retail, tau2Airline].map((domain) => [domain.name, domain]),
);

export function domainNamed(name: string): Domain {
  const domain = domains.get(name);
  if (!domain) {
    throw new MentorError(
      "MNT_ERR_BENCH_INPUT",
      `unknown domain ${JSON.stringify(name)} (known: ${[...domains.keys()].join(", ")})`,
    );
  }
  return domain;
}
