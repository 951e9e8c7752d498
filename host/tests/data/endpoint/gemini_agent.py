"""An external agent built on Google's official `google-genai` Python SDK, for evalhost's conformance tests.

Usage: python3 gemini_agent.py MODE PROMPT, MODE one of create, stream. It reads
GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY as any Gemini program does (the SDK appends
/v1beta/models/MODEL:generateContent or :streamGenerateContent?alt=sse), declares a `read_file`
function, runs the calls the model asks for (a missing file is a functionResponse with `error`),
sends the results back by the call's id, and writes the final text to answer.txt. Every response is
read through the SDK's own types, and checked: a candidate with content, a finishReason on the last
chunk, usage metadata, the function calls' ids and arguments.
"""
import json
import os
import sys

from google import genai
from google.genai import types

MODE = sys.argv[1]
PROMPT = sys.argv[2]
model = os.environ["OPENAI_MODEL"]
client = genai.Client(
    api_key=os.environ["GEMINI_API_KEY"],
    http_options=types.HttpOptions(
        base_url=os.environ["GOOGLE_GEMINI_BASE_URL"],
        retry_options=types.HttpRetryOptions(attempts=1),
    ),
)
TOOLS = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="read_file",
                description="Read a file.",
                parameters_json_schema={
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            )
        ]
    )
]
CONFIG = types.GenerateContentConfig(
    system_instruction="Be brief.",
    tools=TOOLS,
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)
seen = []


def check(condition, message):
    if not condition:
        sys.exit(f"{MODE}: {message}")


def turn(contents):
    if MODE == "create":
        response = client.models.generate_content(model=model, contents=contents, config=CONFIG)
        check(isinstance(response, types.GenerateContentResponse), "the response type")
        seen.append("response")
        candidate = response.candidates[0]
        check(candidate.finish_reason == types.FinishReason.STOP, f"finish_reason {candidate.finish_reason}")
        usage = response.usage_metadata
        return candidate.content, usage
    parts = []
    usage = None
    finish = None
    for chunk in client.models.generate_content_stream(model=model, contents=contents, config=CONFIG):
        check(isinstance(chunk, types.GenerateContentResponse), "the chunk type")
        seen.append("chunk")
        candidate = chunk.candidates[0]
        check(candidate.content is not None and candidate.content.role == "model", "a chunk's content")
        parts.extend(candidate.content.parts or [])
        if candidate.finish_reason is not None:
            finish = candidate.finish_reason
            usage = chunk.usage_metadata
    check(finish == types.FinishReason.STOP, f"the last chunk's finish_reason {finish}")
    text = "".join(p.text for p in parts if p.text)
    calls = [p for p in parts if p.function_call]
    merged = ([types.Part(text=text)] if text else []) + calls
    return types.Content(role="model", parts=merged), usage


def run():
    counted = client.models.count_tokens(model=model, contents=PROMPT)
    check(counted.total_tokens > 0, "count_tokens")
    contents = [types.Content(role="user", parts=[types.Part(text=PROMPT)])]
    for _ in range(6):
        content, usage = turn(contents)
        check(usage is not None and usage.prompt_token_count > 0, "usage")
        calls = [p.function_call for p in content.parts if p.function_call]
        if not calls:
            return "".join(p.text for p in content.parts if p.text)
        contents.append(content)
        results = []
        for call in calls:
            check(call.id, "a function call has its id")
            check(isinstance(call.args, dict), "a function call's args are an object")
            try:
                with open(call.args["path"]) as f:
                    response = {"output": f.read()}
            except OSError as e:
                response = {"error": str(e)}
            results.append(types.Part(function_response=types.FunctionResponse(id=call.id, name=call.name, response=response)))
        contents.append(types.Content(role="user", parts=results))
    sys.exit("too many requests")


text = run()
with open("answer.txt", "w") as f:
    f.write(text)
print(json.dumps({"final": text, "events": sorted(set(seen))}))
