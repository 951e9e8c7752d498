"""A small tool-using agent traced with OpenTelemetry's GenAI instrumentation of the OpenAI client.

It answers the prompt (its last argument) with the official `openai` client's Chat Completions
and one tool, `read_file`, which reads a file of the workspace (its working directory). The
OpenAI calls are traced by `opentelemetry-instrumentation-openai-v2` (`OpenAIInstrumentor`); the
agent adds what that instrumentation does not make: an `invoke_agent` span around the whole run
and an `execute_tool` span around each tool call (GenAI semantic conventions). It is the real
producer of evalhost's OTLP examples beside it (README.md) and of its integration test
(host/tests/integration/trace/otlp_in.rs).

    python3 agent.py [--otlp-endpoint URL] [--semconv latest|events|legacy] PROMPT

Where the telemetry goes:
- `--otlp-endpoint http://127.0.0.1:4318`: to an OTLP/HTTP collector, by the SDK's exporters
  (`POST URL/v1/traces`, `POST URL/v1/logs`, protobuf). Under evalhost the collector's port must
  be widened (`evalhost run --confine-connect 4318`, or `confine: {connect: [4318]}`).
- otherwise: into the workspace's `otel/` directory, each batch encoded by the SDK's own OTLP
  encoders: `traces.pb` (an `ExportTraceServiceRequest`: batches appended, and protobuf reads
  concatenated messages as one), `logs.pb` (an `ExportLogsServiceRequest`, when there are log
  events) and `otlp.jsonl` (OTLP JSON, one request a line, traces and logs mixed, as the
  collector's file exporter writes them). `evalhost run --out DIR` keeps the workspace.

Which conventions (what `openai-v2` 2.4b0 emits with `opentelemetry-util-genai` 0.4b0; from
util-genai 1.0 the latest conventions are always taken):
- `latest` (default): `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` and
  `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`: each `chat` span carries the
  conversation as `gen_ai.input.messages` / `gen_ai.output.messages` (JSON text, the parts
  form), and no log events are made.
- `events`: the same opt-in with `...CAPTURE_MESSAGE_CONTENT=event_only`: the spans carry no
  content; one log event per exchange, `gen_ai.client.inference.operation.details`, carries
  the messages as structured attributes.
- `legacy`: the instrumentation's default conventions (1.30) with
  `...CAPTURE_MESSAGE_CONTENT=true`: the spans carry no content; each message is a log event of
  the chat span (`gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
  `gen_ai.tool.message`, `gen_ai.choice`; bodies in Chat Completions' shape).
The variables are set here because evalhost gives an external agent a clean environment.
"""

import argparse
import json
import os
import sys
from pathlib import Path

AGENT_NAME = "notes-reader"
SYSTEM_PROMPT = "You answer questions about the files of the workspace. Use read_file to read one."
MAX_STEPS = 8
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file of the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "relative to the workspace"}},
                "required": ["path"],
            },
        },
    }
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--otlp-endpoint", help="an OTLP/HTTP collector's base URL (else files in ./otel)")
    parser.add_argument("--semconv", choices=["latest", "events", "legacy"], default="latest")
    parser.add_argument("prompt")
    return parser.parse_args()


def configure_conventions(semconv):
    """Before the instrumentation is imported: it reads these when it instruments."""
    if semconv in ("latest", "events"):
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        capture = "span_only" if semconv == "latest" else "event_only"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = capture
    else:
        os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"


class WorkspaceFiles:
    """The SDK's OTLP encoders' output appended to files of `otel/`, one exporter per signal."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def append(self, name, data):
        with open(self.directory / name, "ab") as file:
            file.write(data)

    def span_exporter(self):
        from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans as json_spans
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

        files = self

        class Exporter(SpanExporter):
            def export(self, spans):
                files.append("traces.pb", encode_spans(spans).SerializeToString())
                files.append("otlp.jsonl", json_line(json_spans(spans)))
                return SpanExportResult.SUCCESS

        return Exporter()

    def log_exporter(self):
        from opentelemetry.exporter.otlp.json.common._log_encoder import encode_logs as json_logs
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
        from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult

        files = self

        class Exporter(LogRecordExporter):
            def export(self, batch):
                files.append("logs.pb", encode_logs(batch).SerializeToString())
                files.append("otlp.jsonl", json_line(json_logs(batch)))
                return LogRecordExportResult.SUCCESS

            def shutdown(self):
                pass

            def force_flush(self, timeout_millis=30000):
                return True

        return Exporter()


def json_line(message):
    return (json.dumps(message.to_dict(), separators=(",", ":")) + "\n").encode()


def telemetry(otlp_endpoint):
    """The tracer and logger providers, exporting in batches (as an application would)."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        base = otlp_endpoint.rstrip("/")
        span_exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces")
        log_exporter = OTLPLogExporter(endpoint=f"{base}/v1/logs")
    else:
        files = WorkspaceFiles("otel")
        span_exporter = files.span_exporter()
        log_exporter = files.log_exporter()
    resource = Resource.create({"service.name": AGENT_NAME})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
    return tracer_provider, logger_provider


def read_file(arguments):
    """The tool: a file of the workspace, never one outside it."""
    path = Path(json.loads(arguments)["path"])
    if path.is_absolute() or ".." in path.parts:
        raise PermissionError(f"{path} is outside the workspace")
    return path.read_text()


def run(client, tracer, model, prompt):
    from opentelemetry.trace import SpanKind, StatusCode

    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
    agent_attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "openai",
        "gen_ai.agent.name": AGENT_NAME,
        "gen_ai.request.model": model,
    }
    with tracer.start_as_current_span(
        f"invoke_agent {AGENT_NAME}", kind=SpanKind.INTERNAL, attributes=agent_attributes
    ) as agent_span:
        for _ in range(MAX_STEPS):
            response = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content or ""
            for call in message.tool_calls:
                name = call.function.name
                with tracer.start_as_current_span(
                    f"execute_tool {name}",
                    kind=SpanKind.INTERNAL,
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": name,
                        "gen_ai.tool.call.id": call.id,
                        "gen_ai.tool.type": "function",
                        "gen_ai.tool.call.arguments": call.function.arguments,
                    },
                ) as tool_span:
                    try:
                        if name != "read_file":
                            raise LookupError(f"no tool named {name}")
                        output = read_file(call.function.arguments)
                    except (OSError, ValueError, KeyError, LookupError) as error:
                        output = f"error: {error}"
                        tool_span.set_status(StatusCode.ERROR, str(error))
                        tool_span.set_attribute("error.type", type(error).__qualname__)
                    tool_span.set_attribute("gen_ai.tool.call.result", output)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        agent_span.set_status(StatusCode.ERROR, f"no answer after {MAX_STEPS} model requests")
        agent_span.set_attribute("error.type", "max_steps")
        return ""


def main():
    args = parse_args()
    configure_conventions(args.semconv)
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    tracer_provider, logger_provider = telemetry(args.otlp_endpoint)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    tracer = tracer_provider.get_tracer(AGENT_NAME)
    try:
        answer = run(OpenAI(), tracer, os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), args.prompt)
    finally:
        # Batches are exported on shutdown: without it the last spans are lost.
        tracer_provider.shutdown()
        logger_provider.shutdown()
    print(answer)
    return 0 if answer else 1


if __name__ == "__main__":
    sys.exit(main())
