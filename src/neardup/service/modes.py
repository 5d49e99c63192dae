"""The service of a data folder's mode: the one its recorded settings name."""

from __future__ import annotations

from .jaccard import JaccardService
from .passages import PassagesService
from .state import COMMIT_DELAY, Service
from .store import Store


def service_for(store: Store, commit_delay: float = COMMIT_DELAY) -> Service:
    """:class:`JaccardService` for a ``--jaccard`` folder, :class:`PassagesService` for a
    ``--passages`` one, else the SimHash :class:`Service`."""
    if store.settings.passages:
        return PassagesService(store, commit_delay)
    if store.settings.jaccard is not None:
        return JaccardService(store, commit_delay)
    return Service(store, commit_delay)
