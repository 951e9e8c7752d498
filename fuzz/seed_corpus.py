#!/usr/bin/env python3
"""Seed fuzz/corpus/<target>/ from the shipped cases and test data (see docs/fuzzing.md).

Usage: python3 fuzz/seed_corpus.py [RUN_OUT_DIR ...]

RUN_OUT_DIR: directories written by `evalhost run --out`, whose *.evidence.json and run-*.jsonl
session logs seed the evidence target. Seeds are written under their content's SHA-1 (libFuzzer's
naming), so re-seeding adds nothing twice. Minimize afterwards with `cargo +nightly fuzz cmin`.
"""

import hashlib
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def case_seeds():
    # The target parses every document as `fuzz/case.yaml`, so the name must be `case`.
    sources = list((ROOT / "cases").glob("*/*.yaml"))
    sources += list((ROOT / "host" / "tests" / "data" / "cases").rglob("*.y*ml"))
    for path in sources:
        text = path.read_text()
        add("case_yaml", re.sub(r"(?m)^name:.*$", "name: case", text, count=1))


def agentcompany_seeds():
    for path in (ROOT / "cases").glob("agentcompany*/*.jsonl"):
        add("agentcompany_fixture", path.read_bytes())


def nexus_seeds():
    # First byte: 0 header.json, 1 events.jsonl, 2 events-NNN.jsonl.zst.
    for journal in (ROOT / "cases").glob("nexus*/*/journal"):
        add("nexus_journal", b"\x00" + (journal / "header.json").read_bytes())
        events = (journal / "events.jsonl").read_bytes()
        add("nexus_journal", b"\x01" + events)
        zst = subprocess.run(["zstd", "-q", "-c"], input=events, capture_output=True, check=True)
        add("nexus_journal", b"\x02" + zst.stdout)


def sse(events, end="\n"):
    return "".join(f"data: {json.dumps(e) if not isinstance(e, str) else e}{end}{end}" for e in events)


def stream_seeds():
    response = {"id": "resp_1", "object": "response", "status": "completed", "model": "m"}
    responses = [
        "event: response.created\n" + sse([{"type": "response.created", "response": dict(response, status="in_progress")}]),
        "event: response.output_text.delta\n" + sse([{"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Hel"}]),
        "event: response.output_item.done\n" + sse([{"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}", "status": "completed"}}]),
        "event: response.completed\n" + sse([{"type": "response.completed", "response": dict(response, output=[{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}], usage={"input_tokens": 12, "output_tokens": 3, "total_tokens": 15})}]),
    ]
    failed = sse([{"type": "response.failed", "response": dict(response, status="failed", error={"code": "server_error", "message": "boom"})}])
    incomplete = sse([{"type": "response.incomplete", "response": dict(response, status="incomplete", incomplete_details={"reason": "max_output_tokens"})}])
    error = sse([{"type": "error", "code": "rate_limit", "message": ""}])
    chat_text = sse([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]},
        {"choices": [{"index": 0, "delta": {"content": "lo"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}},
        "[DONE]",
    ])
    chat_call = sse([
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"comm"}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "and\":\"ls\"}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    ])
    chat_error = sse([{"error": {"message": "bad request"}}])
    anthropic_text = sse([
        {"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 2, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ])
    anthropic_call = sse([
        {"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\":"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "\"ls\"}"}},
        {"type": "message_stop"},
    ])
    anthropic_error = sse([{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}])
    # Reasoning carried across a tool loop, nested and gateway errors, refusals, repeated ids.
    reasoning = sse([
        {"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}},
        {"type": "response.completed", "response": dict(response, output=[{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}, {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash", "arguments": ""}, {"type": "message", "content": [{"type": "refusal", "refusal": "no"}]}], usage={"input_tokens": 5, "output_tokens": 9})},
    ])
    nested_error = sse([{"type": "error", "error": {"type": "too_many_requests", "code": "rate_limit_exceeded", "message": "Please try again in 1.5s."}}])
    chat_refusal = sse([
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None, "refusal": "I can't"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "bash", "arguments": "{}"}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "call_1", "function": {"name": "bash", "arguments": ""}}]}, "finish_reason": "stop"}]},
        "[DONE]",
    ])
    chat_gateway_error = sse([{"choices": [{"index": 0, "delta": {}, "finish_reason": "error"}], "error": {"code": 502, "message": "upstream"}}])
    anthropic_thinking = sse([
        {"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "plan"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "opaque"}},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"input_tokens": 12, "output_tokens": 30}},
        {"type": "message_stop"},
    ])
    # provider_stream: first byte % 3 is the dialect (0 Responses, 1 Chat, 2 Messages).
    for body in ["".join(responses), failed, incomplete, error, reasoning, nested_error]:
        add("provider_stream", b"\x00" + body.encode())
    for body in [chat_text, chat_call, chat_error, chat_refusal, chat_gateway_error]:
        add("provider_stream", b"\x01" + body.encode())
    for body in [anthropic_text, anthropic_call, anthropic_error, anthropic_thinking]:
        add("provider_stream", b"\x02" + body.encode())
    # sse_stream: first byte picks the chunking; bodies exercise the line and field rules.
    add("sse_stream", b"\x03" + "".join(responses).encode())
    add("sse_stream", b"\x07" + anthropic_text.replace("\n", "\r\n").encode())
    add("sse_stream", b"\x0b" + chat_text.replace("\n", "\r").encode())
    add("sse_stream", b"\x00\xef\xbb\xbf: comment\nid: 7\nretry: 3000\nevent: x\ndata\ndata:no space\ndata:  two\n\nid: a\x00b\ndata: \xff\xfe\n\nevent: tail\ndata: {\"unterminated\"")


def evidence_seeds(out_dirs):
    for out in out_dirs:
        for path in pathlib.Path(out).rglob("*.evidence.json"):
            add("evidence_json", path.read_bytes())
        for path in pathlib.Path(out).rglob("run-*.jsonl"):
            add("evidence_json", path.read_bytes())


def bundle_seeds():
    # First byte: 0 MANIFEST.toml, 1 a .tar.gz as given, 2 a tar the target gzips.
    import gzip
    import io
    import tarfile

    component = b"\0asm\x0d\0\x01\0"
    manifest = (
        "# evalhost bundle manifest: these exact bytes are what a bundle signature covers.\n"
        'format = 1\nname = "acme-checks"\nversion = "1.0.0"\n'
        'description = "ACME platform team\'s reviewed graders"\n\n'
        '[graders.final_text_is]\ncomponent = "final_text_is.wasm"\ncapabilities = []\n\n'
        '[[files]]\npath = "final_text_is.wasm"\n'
        f'sha256 = "{hashlib.sha256(component).hexdigest()}"\nsize = {len(component)}\n'
    ).encode()
    add("bundle", b"\x00" + manifest)

    def tar(entries):
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as archive:
            for name, kind, data in entries:
                info = tarfile.TarInfo(name)
                info.type = kind
                info.size = len(data) if kind == tarfile.REGTYPE else 0
                if kind == tarfile.SYMTYPE:
                    info.linkname = "/etc/passwd"
                archive.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        return out.getvalue()

    good = tar([("MANIFEST.toml", tarfile.REGTYPE, manifest), ("final_text_is.wasm", tarfile.REGTYPE, component)])
    add("bundle", b"\x01" + gzip.compress(good, mtime=0))
    add("bundle", b"\x02" + good)
    for entries in [
        [("../escape", tarfile.REGTYPE, b"x")],
        [("link", tarfile.SYMTYPE, b"")],
        [("dir/", tarfile.DIRTYPE, b""), ("dir/a", tarfile.REGTYPE, b"a"), ("./dir/a", tarfile.REGTYPE, b"b")],
        [("x" * 150, tarfile.REGTYPE, b"long name")],
    ]:
        add("bundle", b"\x02" + tar(entries))


def judgment(model, messages, schema, max_tokens, text, tokens=(30, 12)):
    """One judgments.jsonl line whose key matches, as evalhost computes it (sha256 of the
    compact JSON of model and question, fields in order)."""
    question = {"messages": [{"role": r, "content": c} for r, c in messages],
                "schema": schema, "max_output_tokens": max_tokens}
    keyed = json.dumps({"model": model, "question": question}, separators=(",", ":"),
                       ensure_ascii=False)
    key = hashlib.sha256(keyed.encode()).hexdigest()
    return json.dumps({"key": key, "model": model, "question": question,
                       "answer": {"text": text, "input_tokens": tokens[0],
                                  "output_tokens": tokens[1]}},
                      separators=(",", ":"), ensure_ascii=False)


def judgments_seeds():
    schema = json.dumps({"type": "object", "required": ["score", "reason"]})
    rubric = judgment("judge-model", [("system", "Rubric:\nThe answer names three fruits."),
                                      ("user", "## Final text\nApples, pears and plums.\n\n")],
                      schema, 400, '{"score":0.9,"reason":"It names three fruits."}')
    plain = judgment("m", [("user", "Say what you see. ✓")], None, 100, "A pear.", (5, 4))
    add("judgments", rubric + "\n")
    add("judgments", plain + "\n" + rubric + "\n\n")
    add("judgments", plain.replace('"A pear."', '"Two pears."') + "\n")
    add("judgments", plain.replace('"key":"', '"key":"0', 1) + "\n")  # a key that does not match
    add("judgments", rubric + "\n{not json\n")
    add("judgments", "")


def main():
    case_seeds()
    agentcompany_seeds()
    nexus_seeds()
    stream_seeds()
    evidence_seeds(sys.argv[1:])
    bundle_seeds()
    judgments_seeds()


if __name__ == "__main__":
    main()
