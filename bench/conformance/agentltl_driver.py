"""AgentLTL's side of bench/conformance/agentltl.ts: verify_trace on the examples, and one
Enforcer per random run, driven as the script says.

Given {"suites": [...]} on stdin (agentltl-examples.json), runs verify_trace on each trace of
each suite with its weighted constraints (each `formula` built with agentltl's constructors) and
writes {suite: {trace: {"score", "label", "passed": {constraint: bool}}}}.

Otherwise reads {"config": {...}, "runs": [[step, ...], ...]} on stdin; a step is
{"kind": "call", "tool", "args"}, {"kind": "chain", "calls": [{"tool", "args"}, ...]} or
{"kind": "resume"}. Each call or chain is its own generation; an allowed call (every call of
an allowed chain) is recorded as run. Writes one list of outcomes per run on stdout:
{"action", "constraints", "escalated", "override", "latched", "index"}.
"""

import json
import sys

import agentltl
from agentltl import Before, Called, Constraint, ConstraintSeverity, Enforcer, Globally, Not, verify_trace

# The names a constraint's `formula` may use: the catalogue, and nothing else.
CATALOGUE = {
    name: getattr(agentltl, name)
    for name in (
        "Called", "CalledNTimes", "Before", "After", "AllBefore", "BranchCalled", "CalledWith",
        "CalledWithResult", "CalledInOrder", "InstanceBefore", "WithinSteps",
    )
}

SEVERITY = {
    "S1": ConstraintSeverity.HARD_STOP,
    "S2": ConstraintSeverity.PERSISTENT_BLOCK,
    "S3": ConstraintSeverity.ASK,
    "S4": ConstraintSeverity.SOFT_BLOCK,
    "S5": ConstraintSeverity.BLOCK_AND_WARN,
    "S7": ConstraintSeverity.TOLERATE,
}

CONSTRAINTS = [
    Constraint("S1", Globally(Not(Called("drop_table")))),
    Constraint("S2", Before("run_tests", "deploy")),
    Constraint("S3", Globally(Not(Called("pay")))),
    Constraint("S4", Globally(Not(Called("send_external")))),
    Constraint("S5", Globally(Not(Called("refund")))),
    Constraint("S7", Globally(Not(Called("restart")))),
]


def outcome(decision):
    return {
        "action": decision.action,
        "constraints": [v.constraint_name for v in decision.violations],
        "notes": [v.constraint_name for v in decision.notes],
        "escalated": bool(decision.escalated),
        "override": decision.override,
        "latched": bool(decision.latched),
        "index": decision.index,
    }


def tool_calls(trace):
    return [{"tool_name": call} if isinstance(call, str) else call for call in trace]


def verify(suites):
    results = {}
    for suite in suites:
        constraints = [
            Constraint(c["name"], eval(c["formula"], {"__builtins__": {}}, CATALOGUE), weight=c["weight"])
            for c in suite["constraints"]
        ]
        results[suite["name"]] = {}
        for name, trace in suite["traces"].items():
            report = verify_trace({"tool_calls": tool_calls(trace)}, constraints)
            results[suite["name"]][name] = {
                "score": report["compliance_score"],
                "label": report["compliance_label"],
                "passed": {c["name"]: c["passed"] for c in report["constraints"]},
            }
    return results


def main():
    request = json.load(sys.stdin)
    if "suites" in request:
        json.dump(verify(request["suites"]), sys.stdout)
        return
    config = request["config"]
    results = []
    for run in request["runs"]:
        enforcer = Enforcer(
            CONSTRAINTS,
            SEVERITY,
            max_soft_attempts=config["max_soft_attempts"],
            soft_block_mode=config["soft_block_mode"],
            max_consecutive_soft_attempts=config.get("max_consecutive_soft_attempts"),
            escalate_to=ConstraintSeverity[config["escalate_to"]],
            latch_stop=True,
        )
        outcomes = []
        for step in run:
            if step["kind"] == "resume":
                enforcer.resume()
                outcomes.append({"action": "resumed"})
                continue
            enforcer.begin_generation()
            if step["kind"] == "call":
                decision = enforcer.check(step["tool"], step["args"])
                if decision.allowed:
                    enforcer.record_completed(step["tool"], step["args"], result={})
            else:
                calls = [(call["tool"], call["args"]) for call in step["calls"]]
                decision = enforcer.check_chain(calls)
                if decision.allowed:
                    for name, args in calls:
                        enforcer.record_completed(name, args, result={})
            outcomes.append(outcome(decision))
        results.append(outcomes)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
