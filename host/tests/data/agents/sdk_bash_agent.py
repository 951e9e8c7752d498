"""An external agent built on the official `openai` Python SDK, as people write them: the
Responses API, streamed, the SDK's default retries, and one `bash` function tool it runs itself.

Usage: python3 sdk_bash_agent.py (the prompt on stdin). It reads OPENAI_BASE_URL,
OPENAI_API_KEY and OPENAI_MODEL as any OpenAI program does. Its `bash` tool answers a call
without a `command` with an error text, and refuses any command that starts with `rm` (its own
policy); otherwise it runs the command in the workspace and answers with its exit code and
output. A failed response (`response.failed`) ends it with exit status 1 and the reason on
stderr; the final text is printed.
"""
import json
import os
import subprocess
import sys

from openai import OpenAI

client = OpenAI()
model = os.environ["OPENAI_MODEL"]

TOOLS = [
    {
        "type": "function",
        "name": "bash",
        "description": "Run a shell command in the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
        "strict": False,
    }
]


def bash(arguments):
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError as e:
        return f"error: the arguments are not JSON: {e}"
    command = args.get("command") if isinstance(args, dict) else None
    if not isinstance(command, str):
        return "error: bash needs a `command` argument"
    if command.lstrip().startswith("rm"):
        return "refused: this agent does not run rm"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    return f"exit code {done.returncode}\n{done.stdout}{done.stderr}"


def respond(items):
    final = None
    for event in client.responses.create(model=model, input=items, tools=TOOLS, stream=True):
        if event.type == "response.failed":
            sys.exit(f"model failed: {event.response.error.message}")
        if event.type == "response.completed":
            final = event.response
    if final is None:
        sys.exit("the stream ended without response.completed")
    return final


items = [{"role": "user", "content": sys.stdin.read()}]
for _ in range(8):
    response = respond(items)
    calls = [item for item in response.output if item.type == "function_call"]
    if not calls:
        print(response.output_text)
        sys.exit(0)
    items += [item.to_dict() for item in response.output]
    for call in calls:
        items.append({"type": "function_call_output", "call_id": call.call_id, "output": bash(call.arguments)})
sys.exit("too many requests")
