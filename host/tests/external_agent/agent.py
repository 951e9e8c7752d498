"""A tiny external agent for evalhost's tests: standard library only.

Reads the prompt from stdin (or argv[1]), asks the Responses endpoint at $OPENAI_BASE_URL,
runs `read_file` calls itself, sends the results back as `function_call_output` items, writes
the final text to answer.txt and prints it.
"""
import json
import os
import sys
import urllib.request


def ask(items):
    body = json.dumps({"model": os.environ["OPENAI_MODEL"], "input": items, "stream": True})
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/responses",
        data=body.encode(),
        headers={
            "content-type": "application/json",
            "authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    for line in text.splitlines():
        if line.startswith("data:"):
            event = json.loads(line[5:])
            if event.get("type") == "response.completed":
                return event["response"]["output"]
            if event.get("type") == "response.failed":
                sys.exit("model failed: " + event["response"]["error"]["message"])
    sys.exit("no response.completed event")


prompt = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
items = [{"role": "user", "content": prompt}]
for _ in range(5):
    output = ask(items)
    calls = [item for item in output if item["type"] == "function_call"]
    if not calls:
        text = "".join(
            part.get("text", "")
            for item in output
            if item["type"] == "message"
            for part in item["content"]
        )
        with open("answer.txt", "w") as f:
            f.write(text)
        print(text)
        sys.exit(0)
    for call in calls:
        path = json.loads(call["arguments"])["path"]
        with open(path) as f:
            result = f.read()
        items.append(call)
        items.append({"type": "function_call_output", "call_id": call["call_id"], "output": result})
sys.exit("too many requests")
