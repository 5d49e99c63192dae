"""``neardup serve`` on uvicorn: its logs (the address, the shutdown) and the
header deadline uvicorn lacks.

uvicorn times out an idle keep-alive connection, but not one that sends its request line and
headers slowly or not at all: every such connection is held until the client goes (measured:
3,000 half-open connections, all held). :class:`_HeaderDeadline` gives each request's headers
a deadline from the connection's start, or from the end of the previous response, as nginx's
``client_header_timeout`` does (408, then the connection closed), and caps their size (400).
The body's deadline and size are the ASGI layer's (``asgi.Measured``).

:func:`bind` takes the address before anything is loaded (a busy port fails in a moment, not
after the index has loaded); :func:`run` listens on it once the kernels are loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import errno
import ipaddress
import logging
import socket
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

LOG = logging.getLogger("neardup.serve")

MAX_HEADER_BYTES = 64 * 1024
"""The request line and headers of one request, at most (nginx's large_client_header_buffers)."""


def _plain(status: str, text: str) -> bytes:
    body = text.encode()
    head = f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body


_TIMEOUT = _plain("408 Request Timeout", "the request's headers did not arrive in time")


class _HeaderDeadline(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a deadline and a size cap on each request's headers,
    writing through :class:`_OneWrite`."""

    header_timeout: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._header_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = _OneWrite(transport, self.loop)  # type: ignore[assignment]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._header_bytes = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._disarm()  # the body has its own deadline, in the ASGI layer
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.timeout_keep_alive_task is not None:  # idle now, waiting for the next request
            self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout, self._time_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _count(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > MAX_HEADER_BYTES:
            # Raised inside httptools' callback: uvicorn answers 400 and closes the connection.
            raise ValueError(f"the request's headers are over {MAX_HEADER_BYTES:,} bytes")

    def _time_out(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.write(_TIMEOUT)
            self.transport.close()


class _OneWrite:
    """A connection's transport as uvicorn sees it: each write is held until the next one, a
    close, or the end of the event loop's turn, and then sent with it, so every write still
    goes out in order. uvicorn writes a response's head and its body apart, each a system call
    and a TCP segment that wakes the client; a head and a body sent in one turn now go together
    (measured on 2 cores, 8 writers of single documents: 1,340 to 1,830 acknowledged adds a
    second, and a tenth of a millisecond less of the event loop's time a request)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport, self._loop = transport, loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        if self._transport.is_closing():
            self._transport.write(data)  # as before: the transport says what becomes of it
        elif self._held is None:
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            held, self._held = self._held, None
            self._transport.write(held + data)

    def flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():  # else the client has gone
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


_BIND_HINTS = {
    errno.EADDRINUSE: "another process listens there (a neardup serve already running?): stop it, "
    "or choose another --port",
    errno.EADDRNOTAVAIL: "--host must be an address of this machine (127.0.0.1; 0.0.0.0 for all)",
    errno.EACCES: "ports below 1024 need privileges: choose another --port",
}


def bind(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to each address ``host`` names, on ``port``, as uvicorn would bind them
    (asyncio's ``create_server``: SO_REUSEADDR, IPv6 sockets IPv6 only), not yet listening: a
    connection is refused until :func:`run` listens, once the kernels are loaded. Raises
    OSError naming the address and what to do when it cannot be had."""
    where = url(host, port)
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        fix = "give --host an address of this machine"
        raise OSError(f"cannot listen on {where}: {error.strerror}; {fix}") from None
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(addresses):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError as error:
        for sock in bound:
            sock.close()
        hint = _BIND_HINTS.get(error.errno or 0)
        raise OSError(
            f"cannot listen on {where}: {error.strerror or error}{f'; {hint}' if hint else ''}"
        ) from None
    return bound


def loopback(sockets: list[socket.socket]) -> bool:
    """Whether every one of ``sockets`` is bound to a loopback address (reachable from this
    machine only)."""
    return all(ipaddress.ip_address(sock.getsockname()[0]).is_loopback for sock in sockets)


def url(host: str, port: int) -> str:
    """The address as a URL, as uvicorn logs it (an IPv6 address in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host or '0.0.0.0'}:{port}"


class _Server(uvicorn.Server):
    """uvicorn's server on sockets bound already, logging the address once it listens (uvicorn
    logs it only for the sockets it binds itself)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if sockets:
            where = url(self.config.host, sockets[0].getsockname()[1])
            logging.getLogger("uvicorn.error").info("Uvicorn running on %s (Press CTRL+C to quit)", where)


def run(
    app: Any,
    sockets: list[socket.socket],
    *,
    host: str,
    header_timeout: float = 10.0,
    keep_alive_timeout: int = 5,
    max_connections: int | None = None,
) -> None:
    """Serve ``app`` on uvicorn, listening on ``sockets`` (from :func:`bind` of ``host``),
    until SIGINT or SIGTERM, logging its address and shutdown to stderr (each request is the
    app's to log: ``create_app(access_log=True)``)."""
    protocol = type("HeaderDeadline", (_HeaderDeadline,), {"header_timeout": header_timeout})
    log_config = copy.deepcopy(LOGGING_CONFIG)
    log_config["loggers"]["neardup"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    config = uvicorn.Config(
        app,
        host=host,
        http=protocol,
        log_config=log_config,
        log_level="info",
        access_log=False,
        timeout_keep_alive=keep_alive_timeout,
        limit_concurrency=max_connections,
    )
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises SIGINT again once stopped
        _Server(config).run(sockets=sockets)
