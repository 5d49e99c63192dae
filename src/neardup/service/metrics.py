"""What ``/metrics`` reports: the service's Prometheus counters, one registry per app."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

ROUTES = frozenset(
    {"documents", "query", "passages", "stats", "healthz", "metrics", "openapi.json", "docs", "redoc"}
)
"""The first path segments of the app's routes: the ``route`` label's values, with ``other``."""


def route_label(path: str) -> str:
    """The ``route`` label of a request for ``path``: its route's first segment, or ``other``
    for every path no route serves. Requests are counted before routing and authentication,
    so a label per path would let any client grow ``/metrics`` without bound (measured: 3,000
    unknown paths took it from 13 KB to 15.7 MB)."""
    first = path.split("/", 2)[1] if path.startswith("/") else ""
    return first if first in ROUTES else "other"


class Metrics:
    """The counters of one app: its own registry, so two apps in one process count apart."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "neardup_requests", "HTTP requests", ["route", "status"], registry=self.registry
        )
        self.stored = Counter("neardup_documents_stored", "documents stored", registry=self.registry)
        self.queried = Counter("neardup_documents_looked_up", "documents looked up", registry=self.registry)
        self.size = Gauge("neardup_documents", "documents stored now", registry=self.registry)
        self.latency = Histogram(
            "neardup_request_seconds", "request latency", ["route"], registry=self.registry
        )

        # Each label's counters, looked up once: prometheus_client's labels() checks and locks.
        self._latency_of: dict[str, Any] = {}
        self._requests_of: dict[tuple[str, int], Any] = {}

    def answered(self, route: str, status: int, seconds: float) -> None:
        """Count a request to ``route`` answered with ``status`` after ``seconds``."""
        latency = self._latency_of.get(route)
        if latency is None:
            latency = self._latency_of[route] = self.latency.labels(route)
        requests = self._requests_of.get((route, status))
        if requests is None:
            requests = self._requests_of[route, status] = self.requests.labels(route, str(status))
        latency.observe(seconds)
        requests.inc()

    def text(self) -> str:
        """The Prometheus text exposition of every counter."""
        return generate_latest(self.registry).decode()
