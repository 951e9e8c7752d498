"""The smallest OTLP/HTTP collector: it keeps each export request's body as it arrived.

    python3 collector.py DIR [PORT]

Listens on 127.0.0.1:PORT (default: a free port), prints the port on its first line, and
writes the body of each `POST /v1/traces` and `POST /v1/logs` to DIR (`0001-traces.pb`,
`0002-logs.pb`, ...: protobuf `ExportTraceServiceRequest` / `ExportLogsServiceRequest`, as
`agent.py --otlp-endpoint` sends them), answering each with an empty success. A run's agent
reaches it when its port is widened: `evalhost run --confine-connect PORT`.
"""

import gzip
import http.server
import sys
import threading
from pathlib import Path

SIGNALS = {"/v1/traces": "traces", "/v1/logs": "logs", "/v1/metrics": "metrics"}


def main():
    directory = Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    lock = threading.Lock()
    received = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            signal = SIGNALS.get(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if signal is None:
                self.send_error(404, f"no OTLP signal at {self.path}")
                return
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            with lock:
                received[0] += 1
                name = f"{received[0]:04d}-{signal}.pb"
            # Written whole, then renamed: a reader never sees half a request.
            (directory / f".{name}").write_bytes(body)
            (directory / f".{name}").rename(directory / name)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
