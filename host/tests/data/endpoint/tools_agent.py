"""An external agent declaring every kind of Responses tool Codex declares (standard library only):
a function without `parameters`, a `custom` tool with a grammar, `namespace`, `web_search`. One
request, not streamed; prints the answer's text."""
import json
import os
import sys
import urllib.request

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools.json")) as f:
    TOOLS = json.load(f)
body = json.dumps({"model": os.environ["OPENAI_MODEL"], "input": sys.stdin.read(), "tools": TOOLS, "store": False})
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/responses", data=body.encode(),
                                 headers={"content-type": "application/json"})
with urllib.request.urlopen(request, timeout=20) as response:
    answer = json.loads(response.read())
print(answer["output"][0]["content"][0]["text"])
