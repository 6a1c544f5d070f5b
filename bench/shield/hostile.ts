import { performance } from "node:perf_hooks";
import { Evaluator } from "../../src/evaluator/index.js";
import { Labeler } from "../../src/labeler/index.js";
import { loadPolicy } from "../../src/policy/index.js";
import { shieldSetsFor } from "../../src/shield/token/index.js";
import { shippedPolicy } from "../paths.js";

/**
 * The token shield's preparation of one turn (ground, `next`, the sets with their redirects) for
 * requests that repeat themselves, on the travel policy: N copies of one request in N user
 * messages, and N requests of one route that differ in mode, class or urgency (up to 18 distinct
 * task calls). Each row is a fresh evaluator and labeler, as for a server's first such request.
 */
export async function hostileRequests(counts: readonly number[]): Promise<void> {
  const policy = loadPolicy(shippedPolicy("travel"));
  const variants: string[] = [];
  for (const mode of ["a train", "a flight", "a trip"])
    for (const travelClass of mode === "a train" ? [""] : ["", " in business class", " in economy class"])
      for (const urgent of ["", " It is urgent."])
        variants.push(`Book ${mode}${travelClass} from Toronto to Chicago.${urgent}`);
  const workloads = [
    { name: "copies of one request", text: () => "Book a train from Toronto to Chicago." },
    { name: "requests of one route", text: (index: number) => variants[index % variants.length] as string },
  ];
  const header = "| messages | kind | task calls | ground ms | next ms | sets ms | search stopped |";
  console.log(header);
  console.log(header.replace(/[^|]/g, "-"));
  for (const workload of workloads) {
    for (const count of counts) {
      const messages = Array.from({ length: count }, (_, index) => ({
        role: "user",
        content: workload.text(index),
      }));
      const evaluator = new Evaluator(policy);
      let started = performance.now();
      const grounded = (await new Labeler(policy).ground(messages)).messages;
      const groundMs = performance.now() - started;
      started = performance.now();
      const next = evaluator.next(grounded);
      const nextMs = performance.now() - started;
      started = performance.now();
      const sets = shieldSetsFor(evaluator, grounded, next);
      const setsMs = performance.now() - started;
      const taskCalls = evaluator.run(grounded).task.length;
      console.log(
        `| ${count} | ${workload.name} | ${taskCalls} | ${groundMs.toFixed(0)} | ${nextMs.toFixed(0)} | ${setsMs.toFixed(0)} | ${sets.searchStopped ?? "no"} |`,
      );
    }
  }
}
