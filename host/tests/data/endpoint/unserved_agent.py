"""An external agent that knocks on doors the model endpoint does not serve (standard library only):
a WebSocket upgrade GET of /responses (as Codex tries first), a wrong path, a HEAD probe of
/v1/messages, then one good Responses request. Prints the statuses it got and the model's text."""
import json
import os
import urllib.error
import urllib.request

base = os.environ["OPENAI_BASE_URL"]
anthropic = os.environ["ANTHROPIC_BASE_URL"]


def status(request):
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


statuses = [
    status(urllib.request.Request(base + "/responses", headers={"Upgrade": "websocket", "Connection": "Upgrade"}))[0],
    status(urllib.request.Request(base + "/completions", data=b"{}", headers={"content-type": "application/json"}))[0],
    status(urllib.request.Request(anthropic + "/v1/messages", method="HEAD"))[0],
    status(urllib.request.Request(anthropic + "/api/hello", method="HEAD"))[0],
]
body = json.dumps({"model": os.environ["OPENAI_MODEL"], "input": "hi"}).encode()
code, text = status(urllib.request.Request(base + "/responses", data=body, headers={"content-type": "application/json"}))
response = json.loads(text)
print(statuses, response["output"][0]["content"][0]["text"])
