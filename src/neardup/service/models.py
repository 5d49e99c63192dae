"""The HTTP API's wire format: pydantic schemas of requests and answers, and fingerprints as hex.

Requests are checked by models that forbid unknown fields: a malformed body, an unknown field or
a wrong type is a 422 naming the field's path, never a 500.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..io.fingerprint_files import format_hex, parse_hex


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
    metadata: dict[str, Any] | None = None

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

    store: bool = True
    skip_if_duplicate: bool = False
    max_distance: int | None = Field(default=None, ge=0)
    bits: int | None = Field(default=None, description="if given, must be the folder's")


class Duplicate(BaseModel):
    id: str
    distance: int


class Result(BaseModel):
    id: str | None
    fingerprint: str
    duplicates: list[Duplicate]
    stored: bool


class Results(BaseModel):
    results: list[Result]


def results_json(
    batch: Batch, fps: np.ndarray, found: list[list[dict[str, Any]]], stored: list[bool]
) -> bytes:
    """The answer to a batch, in order: the ``Results`` schema, serialised directly."""
    results = [
        {"id": d.id, "fingerprint": fingerprint_hex(fps[p]), "duplicates": found[p], "stored": stored[p]}
        for p, d in enumerate(batch.documents)
    ]
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


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
