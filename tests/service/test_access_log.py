"""The service's access log (``asgi.AccessLog``): uvicorn's line format, ids quoted, and a
broken stdout that stops the log, never the service."""

from __future__ import annotations

import asyncio
import io

from neardup.service.asgi import AccessLog


def scope(path: str, query: bytes = b"") -> dict:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "query_string": query,
        "http_version": "1.1",
        "client": ("127.0.0.1", 5000),
    }


def test_lines_are_uvicorns_and_flushed_soon():
    class Counted(io.StringIO):
        flushes = 0

        def flush(self) -> None:
            Counted.flushes += 1
            super().flush()

    async def run() -> str:
        stream = Counted()
        log = AccessLog(stream, delay=0.01)
        log.request(scope("/documents/a\nINFO: forged", b"x=1"), 404)
        log.request(scope("/healthz"), 200)
        assert Counted.flushes == 0  # written at once, flushed later, once for both
        await asyncio.sleep(0.05)
        assert Counted.flushes == 1
        return stream.getvalue()

    assert asyncio.run(run()).splitlines() == [
        'INFO:     127.0.0.1:5000 - "GET /documents/a%0AINFO%3A%20forged?x=1 HTTP/1.1" 404 Not Found',
        'INFO:     127.0.0.1:5000 - "GET /healthz HTTP/1.1" 200 OK',
    ]


def test_a_broken_stream_stops_the_log_not_the_requests():
    class Broken(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            Broken.writes += 1
            raise BrokenPipeError("the reader of stdout has gone")

    async def run() -> None:
        log = AccessLog(Broken(), delay=0.01)
        log.request(scope("/documents"), 200)  # does not raise
        log.request(scope("/documents"), 200)
        log.flush()
        await asyncio.sleep(0.02)

    asyncio.run(run())
    assert Broken.writes == 1  # tried once, then left alone
