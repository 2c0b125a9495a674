"""A loopback HTTP server for tests: started on a free port, stopped at once on exit.

``serve_forever``'s default poll (0.5 s) made every ``shutdown`` wait half a second; a short
poll stops it in a few milliseconds.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

POLL_SECONDS = 0.02


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1; yields the base URL (``http://127.0.0.1:PORT``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def recording_json(body: str) -> Iterator[tuple[str, list[str]]]:
    """A listener that answers every GET with the JSON ``body`` and records the paths asked
    for: a test asserts nothing ever reached it."""
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return None

    with serving(Handler) as url:
        yield url, requests


_refusing: list[socket.socket] = []


def refused_url() -> str:
    """``http://127.0.0.1:PORT`` where every connection is refused at once, for as long as this
    process runs: the port stays bound (never listening), so no server another test starts can
    take it, as it could a port found free and closed again."""
    if not _refusing:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        _refusing.append(sock)
    return f"http://127.0.0.1:{_refusing[0].getsockname()[1]}"
