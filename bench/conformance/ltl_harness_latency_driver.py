"""Times ltl-harness's own guardrail hooks per call, for bench/conformance/ltl-harness-latency.ts.

stdin:  {"sessions": [[{"tool": "issue_refund", "result": {...}}, ...]], "warmup": [[...]]}
stdout: {"version", "calls": [[{"pre_us", "post_us", "deny"}, ...]]} per session (post_us null when denied)

Each session gets fresh hooks from `ltl_harness.hooks.create_guardrails` on the bundled refund
rulebook, as bench/conformance/ltl_harness_driver.py runs them: PreToolUse decides the call, and a
call it allows is recorded by PostToolUse (a denied call never runs). Times are wall-clock
(time.perf_counter_ns) around each awaited hook.
"""

import asyncio
import json
import shutil
import sys
import time
from importlib import metadata, resources

PREFIX = "mcp__refund__"


async def run(rulebook, calls):
    from ltl_harness.hooks import create_guardrails

    hooks, _monitor, _finalize = create_guardrails(rulebook, None)
    pre, post = (hooks[event][0].hooks[0] for event in ("PreToolUse", "PostToolUse"))
    out = []
    for call in calls:
        tool = PREFIX + call["tool"]
        start = time.perf_counter_ns()
        answer = await pre({"tool_name": tool, "tool_input": {}}, None, None)
        pre_us = (time.perf_counter_ns() - start) / 1000
        deny = answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
        post_us = None
        if not deny:
            response = {"content": [{"type": "text", "text": json.dumps(call["result"])}]}
            start = time.perf_counter_ns()
            await post({"tool_name": tool, "tool_input": {}, "tool_response": response}, None, None)
            post_us = (time.perf_counter_ns() - start) / 1000
        out.append({"pre_us": pre_us, "post_us": post_us, "deny": deny})
    return out


def main():
    if shutil.which("mona") is None:
        sys.exit("ltl-harness compiles its rules with MONA (through ltlf2dfa): install it (apt-get install mona)")
    from ltl_harness.engine.rulebook import load_rulebook

    request = json.load(sys.stdin)
    examples = resources.files("ltl_harness") / "examples"
    refund = next((str(p) for p in examples.iterdir() if p.name.endswith("refund.rules.yaml")), None)
    if refund is None:
        sys.exit("no refund rulebook among ltl-harness's bundled rulebooks")
    rulebook = load_rulebook(refund)

    async def all_sessions():
        for calls in request.get("warmup", []):
            await run(rulebook, calls)
        return [await run(rulebook, calls) for calls in request["sessions"]]

    calls = asyncio.run(all_sessions())
    json.dump({"version": metadata.version("ltl-harness"), "calls": calls}, sys.stdout)


if __name__ == "__main__":
    main()
