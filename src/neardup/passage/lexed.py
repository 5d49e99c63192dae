"""Which lexer reads each document of ``passages(features="code")``, and what is done with
one that none reads: ``language``'s for all, or else the one its file name says, as code
fingerprints choose (``_lexers.lexer_for``). A document whose name says no language is a bad
record: an error naming it (``errors="raise"``) or left out and counted (``"skip"``), never
read as prose.

A document's name is its file's path when the file is one document, else its id (the
``--id-field`` value of a line or row, or of a text in memory: ``src/app.py``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from .._lexers import lexer_for, lexer_for_file_name
from ..io.batch import Batch
from ..io.rejects import Rejects

NO_LANGUAGE = "no language for the file name"


def document_names(corpus: Any, batch: Batch, where: Any) -> list[str | None]:
    """Each document's name (see the module's docstring), or None where it has none."""
    ids = batch.ids.to_pylist() if batch.ids is not None else [None] * len(batch)
    sources = getattr(corpus, "sources", None)
    if sources is None:
        return [None if i is None else str(i) for i in ids]
    owners = np.broadcast_to(where, len(batch)).tolist()
    rows = batch.rows.tolist()
    return [sources[o].name if row == 0 else i for o, row, i in zip(owners, rows, ids)]


def lexable(
    corpus: Any, batch: Batch, where: Any, language: str | None, rejects: Rejects
) -> tuple[Batch, Any, list[Any]]:
    """(the batch, its documents' sources and their lexers), less the documents no lexer
    reads, each told to ``rejects``. Without ``language`` and a name for a document, a
    ConfigError says how to give one: that is the whole corpus's problem, not a record's."""
    if language is not None:
        return batch, where, [lexer_for(language, None)] * len(batch)
    lexers = []
    for name in document_names(corpus, batch, where):
        if name is None:
            lexer_for(None, None)  # raises, saying how to name the language
            continue
        lexer = lexer_for_file_name(name)
        if lexer is None:
            rejects.reject(
                name,
                "no language is known for this file name; give --language NAME (language=), "
                "or leave files of other languages out",
                NO_LANGUAGE,
            )
        lexers.append(lexer)
    kept = np.array([lexer is not None for lexer in lexers], dtype=bool)
    if kept.all():
        return batch, where, lexers
    return _kept(batch, kept), _kept_where(where, kept), [lexer for lexer in lexers if lexer is not None]


def _kept(batch: Batch, kept: np.ndarray) -> Batch:
    mask = pa.array(kept)
    texts = batch.texts
    texts = [t for t, k in zip(texts, kept.tolist()) if k] if isinstance(texts, list) else texts.filter(mask)
    return replace(
        batch,
        texts=texts,
        rows=batch.rows[kept],
        ids=None if batch.ids is None else batch.ids.filter(mask),
        spans=None if batch.spans is None else batch.spans[kept],
    )


def _kept_where(where: Any, kept: np.ndarray) -> Any:
    return where if np.ndim(where) == 0 else np.asarray(where)[kept]
