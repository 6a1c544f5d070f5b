#!/usr/bin/env python3
"""A travel agent in Python that guards its own tools with mentor's monitor API.

docs/server.md, "The monitor over HTTP", explains it; test/server/python-agent.test.ts runs it
against `mentor serve` on a tiny model. Standard library only.

The model is mentor's own chat endpoint with the shield off (`MODEL:none`): it only proposes
calls. This agent runs the tools itself, so it asks the monitor about every call:

- POST /v1/monitor/check before running a call: a refused call is not run; the shield's
  feedback becomes its result, and the agent follows the shield's advice if it has one;
- POST /v1/monitor/record after running it, with its output;
- POST /v1/monitor/done before it ends the run.

Each answer says which messages to append to the conversation (`append`): the server keeps no
state, the conversation is the run.

    python3 docs/examples/guarded_agent.py --url http://127.0.0.1:8080
"""

import argparse
import json
import sys
import urllib.error
import urllib.request

# The travel desk this agent works for sells one route.
ORIGIN, DESTINATION = "Toronto", "Chicago"
REQUEST = f"Book me a train from {ORIGIN} to {DESTINATION}."


def check_distance(origin, destination):
    print(f"  executing check_distance({origin}, {destination})")
    return f"The distance from {origin} to {destination} is 843 km."


def book_train(origin, destination):
    print(f"  executing book_train({origin}, {destination})")
    return {"status": "confirmed", "route": f"{origin}-{destination}"}


TOOLS = {"check_distance": check_distance, "book_train": book_train}


def tool_schema(name):
    route = {
        "origin": {"type": "string", "enum": [ORIGIN]},
        "destination": {"type": "string", "enum": [DESTINATION]},
    }
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": TOOLS[name].__name__.replace("_", " "),
            "parameters": {"type": "object", "properties": route, "required": list(route)},
        },
    }


class Mentor:
    """mentor's HTTP API: the chat endpoint (the model) and the monitor."""

    def __init__(self, url, key=None):
        self.url = url.rstrip("/")
        self.key = key

    def request(self, method, path, body=None):
        headers = {"content-type": "application/json"}
        if self.key:
            headers["authorization"] = f"Bearer {self.key}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            problem = json.load(error).get("error", {})
            sys.exit(f"{path}: {error.code} {problem.get('code')}: {problem.get('message')}")

    def model(self):
        return self.request("GET", "/v1/models")["data"][0]["id"]

    def monitor(self, question, body):
        return self.request("POST", f"/v1/monitor/{question}", body)


def propose(mentor, model, messages, tool_choice):
    """The model's next move: a call (name, arguments) or a text answer."""
    reply = mentor.request(
        "POST",
        "/v1/chat/completions",
        {
            "model": f"{model}:none",  # the model proposes; this agent guards its own tools
            "messages": messages,
            "tools": [tool_schema(name) for name in TOOLS],
            "tool_choice": tool_choice,
            "max_tokens": 48,
            "seed": 1,
        },
    )
    message = reply["choices"][0]["message"]
    for call in message.get("tool_calls") or []:
        return {"name": call["function"]["name"], "arguments": json.loads(call["function"]["arguments"])}
    return message.get("content") or ""


def run(mentor, goal, steps):
    model = mentor.model()
    print(f"model {model}; goal {goal}")
    messages = [{"role": "user", "content": REQUEST}]
    advised = None  # a call the shield advised after a refusal: made next
    reached = False
    for _ in range(steps):
        if advised is not None:
            call, source = advised, "the shield's advice"
            advised = None
        else:
            choice = "none" if reached else {"type": "function", "function": {"name": goal}}
            proposal = propose(mentor, model, messages, choice)
            if isinstance(proposal, str):
                done = mentor.monitor("done", {"messages": messages})
                if done["allowed"]:
                    print("done? allowed")
                    print(f"answer: {proposal!r}")
                    return 0
                print(f"done? refused: {done['feedback']}")
                messages += [
                    {"role": "assistant", "content": proposal},
                    {"role": "user", "content": done["feedback"]},
                ]
                continue
            call, source = proposal, "the model"
        print(f"proposed {call['name']}({json.dumps(call['arguments'])}) by {source}")
        answer = mentor.monitor("check", {"messages": messages, "call": call})
        decision = answer["decide"]
        if decision["verdict"] == "block":
            rules = ", ".join(finding["rule"] for finding in decision["violations"])
            print(f"refused {call['name']}: {rules}: {answer['feedback']}")
            messages += answer["append"]
            advice = decision.get("advice")
            if advice is not None:
                advised = advice["call"]
            continue
        output = TOOLS[call["name"]](**call["arguments"])
        recorded = mentor.monitor("record", {"messages": messages, "call": call, "output": output})
        print(f"ran {call['name']}: outcome {json.dumps(recorded['outcome'])}")
        messages += recorded["append"]
        reached = reached or call["name"] == goal
    print(f"stopped after {steps} steps")
    return 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8080", help="mentor serve's address")
    parser.add_argument("--key", help="an API key, if the server requires one")
    parser.add_argument("--goal", default="book_train", help="the tool the agent sets out to call")
    parser.add_argument("--steps", type=int, default=8, help="at most this many moves")
    arguments = parser.parse_args()
    return run(Mentor(arguments.url, arguments.key), arguments.goal, arguments.steps)


if __name__ == "__main__":
    sys.exit(main())
