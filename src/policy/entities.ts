import type { PathSegment } from "../expression/index.js";
import type { Report } from "./labeling.js";
import type { RawPolicy } from "./schema.js";
import type { EntitySpec, TaskCallSpec, ToolSpec } from "./types.js";

/**
 * The policy's entities: each variable bound from a task call's field or from a field of a JSON
 * tool output (`o.<field>`), every variable owned by one entity. Problems go to `report`.
 */
export function compileEntities(
  raw: RawPolicy,
  taskCalls: Map<string, TaskCallSpec>,
  tools: Map<string, ToolSpec>,
  report: Report,
): Map<string, EntitySpec> {
  const entities = new Map<string, EntitySpec>();
  const variableOwner = new Map<string, string>();
  for (const [name, entity] of Object.entries(raw.entities)) {
    const variables = new Set<string>();
    const sources: EntitySpec["sources"] = [];
    const outputs: EntitySpec["outputs"] = [];
    for (const [source, bind] of Object.entries(entity.from)) {
      const call = taskCalls.get(source);
      const tool = call ? undefined : tools.get(source);
      if (!call && !tool) {
        report(
          "MNT_ERR_POLICY_REFERENCE",
          `entity ${name} is bound from ${source}, which is neither a task call nor a tool`,
          ["entities", name, "from", source],
          { key: true },
        );
        continue;
      }
      const paths: Record<string, PathSegment[]> = {};
      for (const [variable, field] of Object.entries(bind)) {
        variables.add(variable);
        const where = ["entities", name, "from", source, variable];
        if (call && !call.parameters.some((parameter) => parameter.name === field))
          report("MNT_ERR_POLICY_REFERENCE", `task call ${source} has no field ${field}`, where);
        if (!tool) continue;
        const path = /^o(?:\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(field) ? field.split(".").slice(1) : undefined;
        if (tool.output !== "json")
          report(
            "MNT_ERR_POLICY_REFERENCE",
            `${source} has a text output: an entity is bound from a JSON output's fields`,
            where,
          );
        else if (!path)
          report(
            "MNT_ERR_POLICY_REFERENCE",
            `a variable bound from tool ${source} is a field of its output, written o.<field> (o.transfer_id), not ${JSON.stringify(field)}`,
            where,
          );
        else paths[variable] = path;
      }
      if (call) sources.push({ taskCall: source, bind });
      else outputs.push({ tool: source, bind: paths });
    }
    for (const variable of variables) {
      const owner = variableOwner.get(variable);
      if (owner !== undefined && owner !== name) {
        report(
          "MNT_ERR_POLICY_DUPLICATE",
          `variable ${variable} is used by entities ${owner} and ${name}`,
          ["entities", name],
          { key: true },
        );
      }
      variableOwner.set(variable, name);
    }
    entities.set(name, { name, variables: [...variables], sources, outputs });
  }
  return entities;
}
