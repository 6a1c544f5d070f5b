"""Runs ltl-harness's own guardrail hooks on traces sent by bench/conformance/ltl-harness.ts.

stdin:  {"mode": "shielded" | "unshielded", "traces": [[{"tool": "issue_refund", "result": {...}}, ...]]}
stdout: the bundled rulebook, and per trace and call what ltl-harness says (see `judge`).

Each trace gets fresh hooks from `ltl_harness.hooks.create_guardrails`: PreToolUse decides the call,
PostToolUse records it (in shielded mode only if PreToolUse allowed it: a denied call never runs),
Stop is asked once at the end, then `finalize` gives the rule verdicts.
"""

import asyncio
import json
import shutil
import sys
from importlib import metadata, resources

PREFIX = "mcp__refund__"


def bundled_rulebooks():
    examples = resources.files("ltl_harness") / "examples"
    return sorted(str(entry) for entry in examples.iterdir() if entry.name.endswith(".rules.yaml"))


def describe(rulebook, path):
    return {
        "path": path,
        "name": rulebook.name,
        "version": rulebook.version,
        "activities": rulebook.activities,
        "rules": [
            {
                "id": rule.id,
                "description": rule.description,
                "template": rule.template,
                "params": rule.params,
                "posture": rule.posture,
                "formula": rule.formula,
            }
            for rule in rulebook.rules
        ],
    }


async def judge(rulebook, calls, shielded):
    from ltl_harness.engine.rulebook import candidate_activities, resolve_activity
    from ltl_harness.hooks import create_guardrails

    hooks, monitor, finalize = create_guardrails(rulebook, None)
    pre, post, stop = (hooks[event][0].hooks[0] for event in ("PreToolUse", "PostToolUse", "Stop"))
    rearmed = dict(monitor.states)
    out = []
    for call in calls:
        tool = PREFIX + call["tool"]
        dead = [r.id for r in rulebook.rules if r.dfa.color(monitor.states[r.id]) == "PERM_VIOL"]
        candidates = candidate_activities(rulebook, tool)
        # The same question on ltl-harness's automata re-armed as mentor does (a rule broken for good
        # by a recorded call keeps its state from before it): the reference for the README's cause.
        rearmed_per = [set(breaking(rulebook, rearmed, a)) for a in candidates]
        rearmed_deny = bool(candidates) and all(
            any(rulebook.rule(rid).posture == "seatbelt" for rid in c) for c in rearmed_per
        )
        answer = await pre({"tool_name": tool, "tool_input": {}}, None, None)
        denied = answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
        # The rules the call would break for good whatever its outcome (every posture), as in
        # RunMonitor.decide's per-candidate violations.
        detail = monitor.decide(candidates)
        per_candidate = [set(c["violations"]) for c in detail["per_candidate"]]
        breaks = sorted(set.intersection(*per_candidate)) if per_candidate else []
        recorded = not (shielded and denied)
        if recorded:
            response = {"content": [{"type": "text", "text": json.dumps(call["result"])}]}
            await post({"tool_name": tool, "tool_input": {}, "tool_response": response}, None, None)
            activity = resolve_activity(rulebook, tool, response)
            for r in rulebook.rules:
                after = r.dfa.step(rearmed[r.id], activity)
                if r.dfa.color(after) != "PERM_VIOL" or r.dfa.color(rearmed[r.id]) == "PERM_VIOL":
                    rearmed[r.id] = after
        out.append(
            {
                "decision": "deny" if denied else "allow",
                "deniedBy": detail["denied_by"] if denied else [],
                "breaks": breaks,
                "dead": dead,
                "recorded": recorded,
                "rearmed": {
                    "decision": "deny" if rearmed_deny else "allow",
                    "breaks": sorted(set.intersection(*rearmed_per)) if rearmed_per else [],
                },
            }
        )
    stop_answer = await stop({}, None, None)
    verdicts = finalize()[0]
    return {
        "calls": out,
        "stopBlocked": stop_answer.get("decision") == "block",
        "open": [o["id"] for o in monitor.open_obligations()],
        "final": {rid: v["verdict"] for rid, v in verdicts.items()},
        "rearmedStopBlocked": any(
            r.posture == "seatbelt" and r.dfa.color(rearmed[r.id]) == "CURR_VIOL" for r in rulebook.rules
        ),
    }


def breaking(rulebook, states, activity):
    """The rules `activity` would break for good from `states` (RunMonitor.simulate_one's question)."""
    return [
        r.id
        for r in rulebook.rules
        if r.dfa.color(states[r.id]) != "PERM_VIOL" and r.dfa.color(r.dfa.step(states[r.id], activity)) == "PERM_VIOL"
    ]


def main():
    if shutil.which("mona") is None:
        sys.exit("ltl-harness compiles its rules with MONA (through ltlf2dfa): install it (apt-get install mona)")
    from ltl_harness.engine.rulebook import load_rulebook

    request = json.load(sys.stdin)
    paths = bundled_rulebooks()
    refund = next((p for p in paths if p.endswith("refund.rules.yaml")), None)
    if refund is None:
        sys.exit(f"no refund rulebook among ltl-harness's bundled rulebooks: {paths}")
    rulebook = load_rulebook(refund)
    shielded = request["mode"] == "shielded"

    async def judge_all():
        return [await judge(rulebook, calls, shielded) for calls in request["traces"]]

    traces = asyncio.run(judge_all())
    json.dump(
        {
            "version": metadata.version("ltl-harness"),
            "bundled": paths,
            "rulebook": describe(rulebook, refund),
            "traces": traces,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
