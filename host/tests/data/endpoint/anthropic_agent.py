"""An external agent built on the official `anthropic` Python SDK, for evalhost's conformance tests.

Usage: python3 anthropic_agent.py MODE PROMPT, MODE one of create, stream, helper. It reads
ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY as any Anthropic program does (the SDK appends
/v1/messages), declares a `read_file` tool, runs the calls the model asks for (a missing file is a
`tool_result` with `is_error: true`), sends the results back, and writes the final text to
answer.txt. Every event and message evalhost sends is validated against the SDK's own types.
"""
import json
import os
import sys

import typing

import pydantic
from anthropic import Anthropic
from anthropic.types import Message, RawMessageStreamEvent

MODE = sys.argv[1]
PROMPT = sys.argv[2]
client = Anthropic(max_retries=0)
model = os.environ["OPENAI_MODEL"]


def event_types(union):
    """The SDK's class for each event `type` of a (discriminated) union of event models."""
    members = typing.get_args(typing.get_args(union)[0]) if typing.get_origin(union) is typing.Annotated else typing.get_args(union)
    return {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in members}


STREAM_EVENTS = event_types(RawMessageStreamEvent)


def validate(model, data, what):
    try:
        model.model_validate(data)
    except pydantic.ValidationError as e:
        sys.exit(f"{MODE}: {what} does not fit the SDK's {model.__name__}: {e}")


TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]
seen = []


def check(condition, message):
    if not condition:
        sys.exit(f"{MODE}: {message}")


def turn(messages):
    args = dict(model=model, max_tokens=1024, messages=messages, tools=TOOLS, system="Be brief.")
    if MODE == "create":
        message = client.messages.create(**args)
    elif MODE == "helper":
        with client.messages.stream(**args) as stream:
            for event in stream:
                seen.append(event.type)
            message = stream.get_final_message()
    else:
        content = []
        message = None
        for event in client.messages.create(stream=True, **args):
            check(event.type in STREAM_EVENTS, f"unknown event type {event.type}")
            validate(STREAM_EVENTS[event.type], event.to_dict(), event.type)
            seen.append(event.type)
            if event.type == "message_start":
                message = event.message.to_dict()
            elif event.type == "content_block_start":
                content.append(event.content_block.to_dict())
                content[-1]["partial"] = ""
            elif event.type == "content_block_delta":
                block = content[event.index]
                if event.delta.type == "text_delta":
                    block["text"] += event.delta.text
                else:
                    block["partial"] += event.delta.partial_json
            elif event.type == "message_delta":
                message["stop_reason"] = event.delta.stop_reason
                message["usage"]["output_tokens"] = event.usage.output_tokens
        for block in content:
            partial = block.pop("partial")
            if block["type"] == "tool_use":
                block["input"] = json.loads(partial)
        message["content"] = content
        validate(Message, message, "the assembled message")
        message = Message.model_validate(message)
    validate(Message, message.to_dict(), "the message")
    return message


def run():
    counted = client.messages.count_tokens(model=model, messages=[{"role": "user", "content": PROMPT}])
    check(counted.input_tokens > 0, "count_tokens")
    messages = [{"role": "user", "content": PROMPT}]
    for _ in range(6):
        message = turn(messages)
        calls = [block for block in message.content if block.type == "tool_use"]
        check(message.stop_reason == ("tool_use" if calls else "end_turn"), f"stop_reason {message.stop_reason}")
        check(message.usage.input_tokens > 0, "usage")
        if not calls:
            return "".join(block.text for block in message.content if block.type == "text")
        messages.append({"role": "assistant", "content": [block.to_dict() for block in message.content]})
        results = []
        for call in calls:
            try:
                with open(call.input["path"]) as f:
                    results.append({"type": "tool_result", "tool_use_id": call.id, "content": f.read()})
            except OSError as e:
                results.append({"type": "tool_result", "tool_use_id": call.id, "content": str(e), "is_error": True})
        messages.append({"role": "user", "content": results})
    sys.exit("too many requests")


text = run()
with open("answer.txt", "w") as f:
    f.write(text)
print(json.dumps({"final": text, "events": sorted(set(seen))}))
