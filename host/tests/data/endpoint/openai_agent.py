"""An external agent built on the official `openai` Python SDK, for evalhost's conformance tests.

Usage: python3 openai_agent.py MODE PROMPT, MODE one of responses-stream, responses-create,
responses-helper, chat-stream, chat-helper, chat-create. It reads OPENAI_BASE_URL, OPENAI_API_KEY
and OPENAI_MODEL as any OpenAI program does, declares a `read_file` function tool (and, for the
Responses API, a `write_note` custom tool), runs the calls the model asks for, sends the results
back, and writes the final text to answer.txt. Every event and object evalhost sends is validated
against the SDK's own types; any mismatch exits non-zero with the reason.
"""
import json
import os
import sys

import typing

import pydantic
from openai import OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

MODE = sys.argv[1]
PROMPT = sys.argv[2]
client = OpenAI(max_retries=0)
model = os.environ["OPENAI_MODEL"]
seen = []


def event_types(union):
    """The SDK's class for each event `type` of a (discriminated) union of event models."""
    members = typing.get_args(typing.get_args(union)[0]) if typing.get_origin(union) is typing.Annotated else typing.get_args(union)
    return {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in members}


STREAM_EVENTS = event_types(ResponseStreamEvent)


def validate(model, data, what):
    try:
        model.model_validate(data)
    except pydantic.ValidationError as e:
        sys.exit(f"{MODE}: {what} does not fit the SDK's {model.__name__}: {e}")


def check(condition, message):
    if not condition:
        sys.exit(f"{MODE}: {message}")


def read_file(arguments):
    path = json.loads(arguments)["path"]
    with open(path) as f:
        return f.read()


def validated_events(stream):
    expected = 0
    for event in stream:
        check(event.type in STREAM_EVENTS, f"unknown event type {event.type}")
        validate(STREAM_EVENTS[event.type], event.to_dict(), event.type)
        check(event.sequence_number == expected, f"sequence_number {event.sequence_number} at {expected}")
        expected += 1
        seen.append(event.type)
        yield event


RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "strict": False,
    },
    {"type": "custom", "name": "write_note", "description": "Write note.txt with the input text."},
]


def responses_turn(items):
    args = dict(model=model, input=items, tools=RESPONSES_TOOLS, store=False)
    if MODE == "responses-create":
        response = client.responses.create(**args)
        validate(Response, response.to_dict(), "the response")
        return response
    if MODE == "responses-helper":
        with client.responses.stream(**args) as stream:
            for _ in validated_events(stream):
                pass
            response = stream.get_final_response()
    else:
        final = None
        text = ""
        for event in validated_events(client.responses.create(stream=True, **args)):
            if event.type == "response.output_text.delta":
                text += event.delta
            if event.type == "response.completed":
                final = event.response
        check(final is not None, "no response.completed")
        check(text == final.output_text, f"deltas {text!r} != output_text {final.output_text!r}")
        response = final
    validate(Response, response.to_dict(), "the response")
    return response


def run_responses():
    items = [{"role": "user", "content": PROMPT}]
    for _ in range(6):
        response = responses_turn(items)
        check(response.status == "completed", f"status {response.status}")
        calls = [item for item in response.output if item.type in ("function_call", "custom_tool_call")]
        if not calls:
            return response.output_text
        items += [item.to_dict() for item in response.output]
        for call in calls:
            if call.type == "function_call":
                items.append({"type": "function_call_output", "call_id": call.call_id, "output": read_file(call.arguments)})
            else:
                with open("note.txt", "w") as f:
                    f.write(call.input)
                items.append({"type": "custom_tool_call_output", "call_id": call.call_id, "output": "Done!"})
    sys.exit("too many requests")


CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    }
]


def chat_turn(messages):
    args = dict(model=model, messages=messages, tools=CHAT_TOOLS)
    if MODE == "chat-create":
        completion = client.chat.completions.create(**args)
        validate(ChatCompletion, completion.to_dict(), "the completion")
        return completion.choices[0].message, completion.choices[0].finish_reason
    if MODE == "chat-helper":
        with client.chat.completions.stream(**args) as stream:
            for event in stream:
                if event.type == "chunk":
                    validate(ChatCompletionChunk, event.chunk.to_dict(), "a chunk")
                    seen.append("chunk")
            completion = stream.get_final_completion()
        return completion.choices[0].message, completion.choices[0].finish_reason
    usage = None
    content = ""
    calls = {}
    finish = None
    for chunk in client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **args):
        validate(ChatCompletionChunk, chunk.to_dict(), "a chunk")
        seen.append("chunk")
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            content += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = delta.id or call["id"]
                if delta.function:
                    call["name"] = delta.function.name or call["name"]
                    call["arguments"] += delta.function.arguments or ""
    check(usage is not None and usage.prompt_tokens > 0, "no usage chunk")
    message = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(calls.items())
        ]
    return message, finish


def run_chat():
    messages = [{"role": "user", "content": PROMPT}]
    for _ in range(6):
        message, finish = chat_turn(messages)
        if not isinstance(message, dict):
            message = message.to_dict()
        calls = message.get("tool_calls") or []
        check(finish == ("tool_calls" if calls else "stop"), f"finish_reason {finish}")
        if not calls:
            return message["content"]
        messages.append({"role": "assistant", "tool_calls": calls})
        for call in calls:
            output = read_file(call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    sys.exit("too many requests")


models = [m.id for m in client.models.list()]
check(models == [model], f"models {models}")
text = run_responses() if MODE.startswith("responses") else run_chat()
with open("answer.txt", "w") as f:
    f.write(text)
print(json.dumps({"final": text, "events": sorted(set(seen))}))
