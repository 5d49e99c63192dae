"""The HTTP API's wire format: pydantic schemas of requests and answers, and fingerprints as hex.

Requests are checked by models that forbid unknown fields: a malformed body, an unknown field or
a wrong type is a 422 naming the field's path, never a 500.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator, model_validator

from ..io.fingerprint_files import format_hex, parse_hex

MAX_METADATA_DEPTH = 32
"""How deeply a document's metadata may nest (the object itself is level 1): deeper JSON is
refused when written, as it could not be answered back (serialisers recurse)."""


class Limits(BaseModel):
    """What one request may hold."""

    max_body_bytes: int = 32 * 2**20
    max_batch: int = 1000
    max_text_bytes: int = 4 * 2**20


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1, max_length=1024)
    text: str | None = None
    fingerprint: str | None = Field(default=None, description="hex, instead of text")
    metadata: dict[str, Any] | None = Field(
        default=None, description=f"any JSON object nested at most {MAX_METADATA_DEPTH} deep"
    )

    @field_validator("metadata")
    @classmethod
    def _answerable(cls, metadata: dict[str, Any] | None) -> dict[str, Any] | None:
        """Refuse, when written, what ``GET`` could not send back as JSON: every ``GET`` of
        such a document would fail, or read back another value (NaN as null)."""
        problem = None if metadata is None else metadata_problem(metadata)
        if problem is not None:
            raise ValueError(problem)
        return metadata

    @model_validator(mode="after")
    def _one_source(self) -> DocumentIn:
        if (self.text is None) == (self.fingerprint is None):
            raise ValueError("give exactly one of text and fingerprint")
        if self.id is not None and not _utf8(self.id):
            raise ValueError("id is not valid UTF-8 text (it holds a lone surrogate)")
        return self


class Batch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: list[DocumentIn] = Field(min_length=1)

    @model_validator(mode="after")
    def _distinct_ids(self) -> Batch:
        seen: dict[str, int] = {}
        for p, d in enumerate(self.documents):
            if d.id is not None:
                if d.id in seen:
                    raise ValueError(f"documents[{p}].id repeats documents[{seen[d.id]}].id ({d.id!r})")
                seen[d.id] = p
        return self

    # Strict: true is not 1, nor "1" a number, nor 0 false (pydantic's lax mode takes them).
    store: StrictBool = True
    skip_if_duplicate: StrictBool = False
    max_distance: StrictInt | None = Field(default=None, ge=0)
    bits: StrictInt | None = Field(default=None, description="if given, must be the folder's")


class PassageDocument(BaseModel):
    """A text to find passages of, or a stored document named by its id alone."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1, max_length=1024)
    text: str | None = None

    @model_validator(mode="after")
    def _text_or_id(self) -> PassageDocument:
        if self.text is None and self.id is None:
            raise ValueError("give text, or the id of a stored document")
        if self.id is not None and not _utf8(self.id):
            raise ValueError("id is not valid UTF-8 text (it holds a lone surrogate)")
        return self


class PassageBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: list[PassageDocument] = Field(min_length=1)


class Passage(BaseModel):
    """One passage a query (a) shares with a stored document (b): ``neardup passages``'s
    columns. Offsets are code points (Python ``str`` indices), ``[start, end)``."""

    id_a: str | None
    id_b: str
    start_a: int
    end_a: int
    start_b: int
    end_b: int
    words: int = Field(description="the longer copy's length in words")
    similarity: float = Field(description="2 * matched words / words of both copies")


class PassageResult(BaseModel):
    id: str | None
    passages: list[Passage]
    truncated: bool = Field(description="true when the candidates compared were capped")


class PassageResults(BaseModel):
    results: list[PassageResult]


class Duplicate(BaseModel):
    id: str
    distance: int | None = Field(default=None, description="Hamming distance in bits (SimHash mode)")
    similarity: float | None = Field(
        default=None, description="exact word-shingle Jaccard index (Jaccard mode, --jaccard)"
    )


class Result(BaseModel):
    id: str | None
    fingerprint: str
    duplicates: list[Duplicate]
    stored: bool
    truncated: bool | None = Field(
        default=None,
        description="POST /query in Jaccard mode: true when a cap on candidates cut this text's "
        "search, so duplicates may be incomplete (absent in SimHash mode and from POST /documents)",
    )


class Results(BaseModel):
    results: list[Result]


def results_json(
    batch: Batch,
    fps: np.ndarray,
    found: list[list[dict[str, Any]]],
    stored: list[bool],
    truncated: list[bool] | None = None,
) -> bytes:
    """The answer to a batch, in order: the ``Results`` schema, serialised directly;
    ``truncated`` only where the lookup can be cut (Jaccard mode's queries)."""
    results: list[dict[str, Any]] = [
        {"id": d.id, "fingerprint": fingerprint_hex(fps[p]), "duplicates": found[p], "stored": stored[p]}
        for p, d in enumerate(batch.documents)
    ]
    if truncated is not None:
        for result, cut in zip(results, truncated):
            result["truncated"] = cut
    return json.dumps({"results": results}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def fingerprint_hex(fp: np.ndarray) -> str:
    """A fingerprint's hex, as ``neardup fingerprint`` writes it (high word first)."""
    return format_hex(
        fp.astype(np.uint64).reshape(1, -1) if fp.shape[-1] == 2 else fp.astype(np.uint64).reshape(-1)
    )[0]


def parse_fingerprint(text: str, bits: int, where: str) -> np.ndarray:
    """The fingerprint a request gives as hex; a 422 naming ``where`` when it is not one."""
    if any(c not in "0123456789abcdefABCDEF" for c in text):
        raise HTTPException(422, f"{where} must be hex digits (a {bits}-bit fingerprint)")
    try:
        return parse_hex(text, bits)
    except ValueError as error:
        raise HTTPException(422, f"{where}: {error}") from None


def metadata_problem(metadata: dict[str, Any]) -> str | None:
    """Why ``metadata`` cannot be stored and sent back as JSON, naming the place
    (``metadata['a'][2]``), or None when it can: a lone surrogate (not UTF-8), NaN or an
    infinity (JSON has none), an integer too long to print, or nesting deeper than
    ``MAX_METADATA_DEPTH``. Walked with a stack: a deep value never costs recursion."""
    stack: list[tuple[Any, str, int]] = [(metadata, "metadata", 1)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_METADATA_DEPTH:
                return f"{where} nests deeper than the limit of {MAX_METADATA_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and not _utf8(key):
                    return f"{where} has a key that is not valid UTF-8 text (a lone surrogate)"
                stack.append((item, f"{where}[{_shown(key)}]", depth + 1))
        elif isinstance(value, str) and not _utf8(value):
            return f"{where} is not valid UTF-8 text (it holds a lone surrogate)"
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{where} is {value}: JSON has no NaN or infinity; send null or a string"
        elif isinstance(value, int) and not isinstance(value, bool):
            try:
                str(value)
            except ValueError:
                return f"{where} is an integer too long to send back; send it as a string"
    return None


def _shown(key: Any) -> str:
    """A key as the path of an error shows it: short, and ASCII-safe."""
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
