/**
 * The synthetic domain of bench:shield: tools step_0 … step_{T-1} on an item id; propositions
 * s_k(item) ("step k was called for the item") and ok_k(item) ("and it succeeded"); rules cycle
 * through precedence(s_k, s_k+1), response(s_k, s_k+1), absence(s_k, 3) and not-succession, plus
 * one duty per requested item. The conversation has two successful steps per item.
 */
export function syntheticPolicy(ruleCount: number): string {
  const toolCount = Math.max(4, Math.ceil(ruleCount / 3));
  const lines: string[] = ["policy: synthetic", "manual:"];
  for (let rule = 0; rule < ruleCount; rule++) lines.push(`  S${rule}: Synthetic rule ${rule}.`);
  lines.push("tools:");
  for (let tool = 0; tool < toolCount; tool++) lines.push(`  step_${tool}: {parameters: {id: string}}`);
  lines.push(
    "task:",
    "  request: {parameters: {id: string}}",
    "entities:",
    "  item: {from: {request: {x: id}}}",
    "propositions:",
  );
  for (let tool = 0; tool < toolCount; tool++) {
    lines.push(`  s_${tool}(item): {tool: step_${tool}, when: "a.id == x"}`);
    lines.push(`  ok_${tool}(item): {tool: step_${tool}, when: "a.id == x", outcome: "o.ok == true"}`);
  }
  lines.push("rules:");
  for (let rule = 0; rule < ruleCount; rule++) {
    const a = rule % toolCount;
    const b = (rule + 1) % toolCount;
    const kind = rule % 4;
    if (rule === 0) lines.push(`  - {id: S0, template: existence, a: "ok_0(item)", applies_to: requested}`);
    else if (kind === 1)
      lines.push(`  - {id: S${rule}, template: precedence, a: "ok_${a}(item)", b: "s_${b}(item)"}`);
    else if (kind === 2)
      lines.push(`  - {id: S${rule}, template: response, a: "s_${a}(item)", b: "ok_${b}(item)", mode: warn}`);
    else if (kind === 3) lines.push(`  - {id: S${rule}, template: absence, a: "s_${a}(item)", n: 3}`);
    else lines.push(`  - {id: S${rule}, ltl: "G(ok_${a}(item) -> WX G !s_${a}(item))"}`);
  }
  return `${lines.join("\n")}\n`;
}

export function conversation(bindingCount: number): Record<string, unknown>[] {
  const task = Array.from({ length: bindingCount }, (_, item) => ({
    name: "request",
    arguments: { id: `item${item}` },
  }));
  const messages: Record<string, unknown>[] = [
    { role: "user", content: "Process the items.", mentor: { task } },
  ];
  let id = 0;
  for (let item = 0; item < bindingCount; item++) {
    for (const tool of [0, 1]) {
      const callId = `call_${id++}`;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: callId,
            type: "function",
            function: { name: `step_${tool}`, arguments: JSON.stringify({ id: `item${item}` }) },
          },
        ],
      });
      messages.push({ role: "tool", tool_call_id: callId, content: JSON.stringify({ ok: true }) });
    }
  }
  return messages;
}
