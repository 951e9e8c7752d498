"""An OTLP/HTTP collector for the tests: decodes each POST to /v1/traces with OpenTelemetry's
official proto definitions (the `opentelemetry-proto` package) and appends what it received,
span by span, as one JSON line per request to OUT. Prints its port on stdout once listening.

    python3 collector.py OUT [--hang]

With --hang it accepts connections and never answers (a collector that hangs)."""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

OUT = sys.argv[1]
HANG = "--hang" in sys.argv
lock = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if HANG:
            threading.Event().wait()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        received = {"path": self.path, "content_type": self.headers.get("Content-Type"), "spans": []}
        if self.headers.get("Content-Type") == "application/x-protobuf":
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        received["spans"].append({
                            "resource": resource,
                            "scope": scope_spans.scope.name,
                            "schema_url": scope_spans.schema_url,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "name": span.name,
                            "kind": span.kind,
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "status": {"code": span.status.code, "message": span.status.message},
                            "attributes": attributes(span.attributes),
                            "events": [{"name": e.name, "attributes": attributes(e.attributes)} for e in span.events],
                        })
        else:
            received["json"] = json.loads(body)
        with lock, open(OUT, "a") as out:
            out.write(json.dumps(received) + "\n")
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
