"""Sends chat requests through the Python `openai` client and prints what came back.

Usage: python chat_requests.py BASE_URL < requests.json
requests.json is a JSON list of chat.completions.create keyword arguments (a `mentor` key goes in
extra_body). Prints a JSON list, one entry per request: the tool calls' names and finish reason,
or the HTTP status and the error's code and param.
"""

import json
import sys

import openai


def main() -> None:
    client = openai.OpenAI(base_url=sys.argv[1], api_key="none", max_retries=0)
    results = []
    for request in json.load(sys.stdin):
        mentor = request.pop("mentor", None)
        try:
            completion = client.chat.completions.create(
                **request, **({"extra_body": {"mentor": mentor}} if mentor else {})
            )
            choice = completion.choices[0]
            calls = choice.message.tool_calls or []
            results.append(
                {
                    "calls": [call.function.name for call in calls],
                    "finish_reason": choice.finish_reason,
                }
            )
        except openai.APIStatusError as error:
            body = error.body if isinstance(error.body, dict) else {}
            detail = body.get("error", body) if isinstance(body, dict) else {}
            results.append(
                {"status": error.status_code, "code": detail.get("code"), "param": detail.get("param")}
            )
    json.dump({"openai": openai.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
