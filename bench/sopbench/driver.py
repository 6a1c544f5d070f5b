"""One run of one SOPBench task against an OpenAI-compatible server (mentor serve).

SOPBench's own code does the work, unmodified: env.task's task initializer and the domain's tools
(through run_simulation.run_task_simulation and swarm.core.Swarm), and run_evaluation.py's main()
scores the run with env.evaluator. The one part replaced is where swarm's OpenAIHandler starts a
vLLM server for an open model: here its client is pointed at the given base URL instead, and each
request names the domain's policy (mentor.policy). The run's record is written as JSON to --out.
"""

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from datetime import datetime, timezone


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sopbench", required=True, help="the SOPBench folder (env/, swarm/, data/)")
    parser.add_argument("--domain", required=True)
    parser.add_argument("--action", required=True, help="the task's key in data/<domain>_tasks.json")
    parser.add_argument("--index", type=int, required=True, help="the task's index under its key")
    parser.add_argument("--env-mode", choices=["prompt", "program"], default="prompt")
    parser.add_argument("--base-url", required=True, help="the server's OpenAI-compatible API (…/v1)")
    parser.add_argument("--model", required=True, help="the model id to send (with its :shield suffix)")
    parser.add_argument("--policy", required=True, help="mentor.policy of every request")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def as_dict(message):
    """A message as JSON: swarm passes dicts, the client returns pydantic objects."""
    return message if isinstance(message, dict) else message.model_dump(exclude_none=True)


class MentorClient:
    """An OpenAI client whose chat completions name the policy and keep the server's `mentor` fields.

    It also keeps the conversation of the latest attempt as the dashboard reads it (bench/README.md,
    `conversation`): the messages its last request sent and the answer, and per request how many
    messages it sent and the `mentor` field of the answer.
    """

    def __init__(self, client, policy):
        self.client, self.policy = client, policy
        self.turns, self.seconds = [], 0.0
        self.messages, self.requests = [], []
        self.chat = self
        self.completions = self

    def create(self, **params):
        started = time.monotonic()
        completion = self.client.chat.completions.create(
            **params, extra_body={"mentor": {"policy": self.policy}}
        )
        self.seconds += time.monotonic() - started
        mentor = (completion.model_extra or {}).get("mentor")
        self.turns.append(mentor)
        sent = [as_dict(message) for message in params["messages"]]
        # A retried attempt starts its conversation again: keep the latest one's requests only.
        if self.requests and len(sent) <= self.requests[-1]["messages"]:
            self.requests = []
        self.requests.append({"time": datetime.now(timezone.utc).isoformat(), "messages": len(sent),
                              "mentor": mentor})
        self.messages = sent + [as_dict(completion.choices[0].message)]
        return completion


def main():
    options = parse_args()
    sys.path.insert(0, os.path.abspath(options.sopbench))
    from openai import OpenAI
    import swarm.constants as constants
    from swarm.llm_handler import OpenAIHandler
    from swarm.types import Agent
    from swarm.util import function_to_json  # noqa: F401 (run_simulation's own import path)
    import run_simulation
    import run_evaluation
    from env.task import task_default_dep_full

    # The served model as one of swarm's open models with function calling (its "vllm" backend).
    constants.OSS_MODELS[options.model] = options.model
    constants.FUNCTION_CALLING_MODELS["vllm"].append(options.model)
    client = MentorClient(
        OpenAI(base_url=options.base_url, api_key=os.environ.get("MENTOR_API_KEY", "none"),
               max_retries=0, timeout=15 * 60),
        options.policy,
    )

    class ServerHandler(OpenAIHandler):
        def _init_vllm(self, num_gpus, gpu_memory_utilization):
            self.client = client

    work = tempfile.mkdtemp(prefix="sopbench-run-")
    sys.argv = ["run_simulation.py", "--domain", options.domain, "--env_mode", options.env_mode,
                "--assistant_model", options.model, "--data_dir", os.path.join(options.sopbench, "data"),
                "--output_dir", work]
    args = run_simulation.parse_args()
    with open(os.path.join(args.data_dir, f"{args.domain}_tasks.json"), encoding="utf-8") as file:
        task = copy.deepcopy(json.load(file)[options.action][options.index])
    task["user_goal"] = options.action
    dependencies = task_default_dep_full(args.domain, args.default_constraint_option,
                                         args.constraint_descr_format, dependency_verb_dep_orig=True)
    handler = ServerHandler(model_name=args.assistant_model, tool_calling=True)
    assistant = Agent(name="domain assistant", client=handler, temperature=args.assistant_temperature,
                      top_p=args.assistant_top_p, max_tokens=args.assistant_max_tokens,
                      tool_call_mode=args.tool_call_mode, instructions="", functions=[])
    user = Agent(name="user", client=None, default_response="", response_repeat=True)

    # As run_simulation.main: failed attempts are retried at a higher temperature.
    errors, result = [], None
    while result is None and len(errors) <= args.max_num_retries:
        if errors:
            assistant.temperature, assistant.top_p = 0.7, 0.95
        try:
            result = run_simulation.run_task_simulation(args, task, *dependencies, assistant, user)
        except Exception as error:  # noqa: BLE001 (recorded; the run is retried as upstream does)
            errors.append(f"{error.__class__.__name__}: {error}")
    record = {"errors": errors, "turns": client.turns, "seconds": client.seconds}
    if client.requests:
        record["conversation"] = {"messages": client.messages, "requests": client.requests}
    if result is not None:
        for message in result["interaction"]:
            message.pop("role", None)
        simulation = {"domain": args.domain, "setup": {"env_mode": args.env_mode}, "task": task,
                      "interactions": [result]}
        # run_evaluation.py reads and rewrites the file run_simulation.py would have written.
        folder = os.path.join(work, args.domain)
        os.makedirs(folder, exist_ok=True)
        name = (f"ast_{args.assistant_model.replace('/', '_')}-mode_{args.tool_call_mode}-"
                f"dep_{args.default_constraint_option}-fmt_{args.constraint_descr_format}-"
                f"tool_{args.tool_list}-shuffle_{args.shuffle_func}.json")
        with open(os.path.join(folder, name), "w", encoding="utf-8") as file:
            json.dump([simulation], file)
        sys.argv = ["run_evaluation.py", "--output_dir", work, "--domain", args.domain,
                    "--assistant_model", args.assistant_model, "--tool_list", args.tool_list,
                    "--num_run_per_interaction", "1"]
        run_evaluation.main()
        with open(os.path.join(folder, name), encoding="utf-8") as file:
            evaluated = json.load(file)[0]
        record.update({"interaction": evaluated["interactions"][0]["interaction"],
                       "evaluation": evaluated["evaluations"][0],
                       "prompt": result["prompt"]})
    with open(options.out, "w", encoding="utf-8") as file:
        json.dump(record, file, indent=1, default=str)


if __name__ == "__main__":
    main()
