"""Ids named by ``--id-field`` (``id_field=``) that name more than one document: clusters,
pairs and ``explain`` name documents by id, so a repeated one is ambiguous. Counted by
pyarrow's hash table, once per run."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc


def repeated_ids(ids: Any, field: str | None) -> str | None:
    """A warning naming how many of ``ids`` (a pyarrow string array or chunked array, or a
    list) name more than one document, with the most repeated one; None if each is unique."""
    if ids is None or not len(ids):
        return None
    if isinstance(ids, list):
        ids = pa.array(ids, pa.string())
    counts = pc.value_counts(ids)
    times = counts.field("counts")
    repeated = pc.greater(times, 1)
    n = pc.sum(repeated).as_py() or 0
    if not n:
        return None
    extra = pc.sum(pc.filter(times, repeated)).as_py() - n
    most = pc.index(times, pc.max(times)).as_py()
    example, count = counts.field("values")[most].as_py(), times[most].as_py()
    name = f"--id-field {field!r}" if field else "the ids"
    return (
        f"{n:,} values of {name} name more than one document ({extra:,} documents beyond the "
        f"first of each; e.g. {example!r} names {count:,}): clusters and pairs that name them "
        f"are ambiguous; name documents by a unique field"
    )
