"""Oracle runs of SOPBench tasks, for measuring a policy offline (bench/sopbench/fidelity.ts).

For each task: the system prompt SOPBench renders for it (env.task's task_initializer, the harness's
defaults), the user's opening message, the calls the task's directed action graph asks for before
the goal (prerequisites first, every branch of an "or"; a call only once its own prerequisites
held), each run on the domain's own tools with the values the user knows, and then the goal call.
Written as JSON lines.

This reads the task's answer key (the action graph and whether the action should succeed) on
purpose: it grades a policy against SOPBench's ground truth, like a test suite. Nothing here runs
when mentor serves a model; the shield never sees these files.
"""

import argparse
import json
import os
import sys


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sopbench", required=True, help="the SOPBench folder (env/, data/)")
    parser.add_argument("--domain", required=True)
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def main():
    options = parse_args()
    sys.path.insert(0, os.path.abspath(options.sopbench))
    from env.task import task_default_dep_full, task_initializer

    dep_innate, default_dep, default_descr = task_default_dep_full(
        options.domain, "full", "structured", dependency_verb_dep_orig=True
    )
    with open(os.path.join(options.sopbench, "data", f"{options.domain}_tasks.json")) as file:
        tasks = json.load(file)
    with open(options.out, "w") as out:
        for action, entries in tasks.items():
            for index, task in enumerate(entries):
                task.setdefault("user_goal", action)  # as run_simulation.py sets it
                system, _, assistant, _ = task_initializer(
                    options.domain, task, dep_innate, default_dep, default_descr, None, "prompt", False, "structured"
                )
                record = oracle_run(system, assistant, task)
                record.update({"domain": options.domain, "action": action, "index": index})
                out.write(json.dumps(record) + "\n")


def oracle_run(system, assistant, task):
    known = task["user_known"]
    nodes = task["directed_action_graph"]["nodes"]
    connections = task["directed_action_graph"]["connections"]
    children = {}
    for source, target in connections:
        children.setdefault(source, []).append(target)
    calls = []

    tools = {tool["function"]["name"]: tool["function"]["parameters"]["properties"] for tool in assistant["tools"]}

    def arguments_of(name, mapping):
        parameters = tools.get(name, {})
        values = {parameter: known[parameter] for parameter in parameters if parameter in known}
        values.update({parameter: known[key] for parameter, key in mapping.items() if key in known})
        return values

    results = {}

    def holds(result):
        """A call that did what it checks: True, or (True, value) whose value is not False."""
        if isinstance(result, bool):
            return result
        if isinstance(result, (tuple, list)) and result and result[0] is True:
            return not (len(result) > 1 and result[1] is False)
        return False

    def visit(index):
        """Makes the calls under node `index`, prerequisites first; whether the node holds.
        An SOP-following agent makes a call only once its prerequisites hold: a call whose
        prerequisite failed (a login that returned False, a username that does not exist) or could
        not be made is left out, as are the calls that depend on it."""
        node = nodes[index]
        below = [visit(child) for child in children.get(index, [])]
        if isinstance(node, str):
            return any(below) if node == "or" else all(below)
        if index == 0 or not all(below):
            return False
        name, mapping = node
        # A tool the assistant is not given (internal_get_database) cannot be called; nor a call
        # whose arguments the user does not know.
        if name not in tools or any(key not in known for key in mapping.values()):
            return False
        arguments = arguments_of(name, mapping)
        key = json.dumps([name, arguments], sort_keys=True)
        if key not in results:
            try:
                result = getattr(system, name)(**arguments)
                # What the agent reads: swarm's handle_tool_calls shows a tuple's second element.
                content = str(result[1] if isinstance(result, tuple) else result)
            except Exception as error:  # the tool's own error, as the agent loop would show it
                result, content = None, f"{error.__class__.__name__}: {error}"
            results[key] = holds(result)
            calls.append({"name": name, "arguments": arguments, "content": content})
        return results[key]

    visit(0)
    goal_name, goal_mapping = nodes[0]
    return {
        "should_succeed": task["action_should_succeed"],
        "system": assistant["instructions"],
        "user": task["user_prompt"],
        "calls": calls,
        # SOPBench's bank assistant is not given cancel_credit_card: such a goal cannot be called.
        "goal": {"name": goal_name, "arguments": arguments_of(goal_name, goal_mapping),
                 "available": goal_name in tools},
    }


if __name__ == "__main__":
    main()
