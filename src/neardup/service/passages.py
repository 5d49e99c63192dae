"""Passages mode of ``neardup serve`` (``--passages``): ``POST /passages`` answers, for each
text, the stored documents that share a passage with it and where the passage lies in both,
as ``neardup passages`` finds them (its columns: ``id_a`` the text's, ``id_b`` the stored
document's, code point offsets, ``words``, ``similarity``).

A thin sibling of the passages job: a text's sampled seeds (``decision.passage_matching.Seeds``) find
its candidates in an index of every stored document's distinct seeds (a :class:`BandIndex`,
swapped whole at each commit as the band index of Jaccard mode is); the candidates' texts are
read back from the store, and ``passages_with_first`` runs the job's own chains, alignment
and rules over the text and them. For a small corpus the answer is exactly what the job finds
between the text and the stored documents (``tests/service/test_passages_mode.py``).

The work of one query is bounded whatever is stored: at most ``MAX_CANDIDATES`` candidates,
those sharing the most seeds with the text, and at most as many read from one seed's bucket
(boilerplate stored in a million pages); a result whose candidates were cut says
``"truncated": true``.

Writes are the SimHash mode's (``state.Service``: group commit, one transaction, answered once
on disk; ``/query`` and ``/documents`` still answer SimHash near-duplicates). The committer
also makes each text's distinct seeds; the store keeps them and the text beside the row, in
the same transaction.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from fastapi import HTTPException

from ..decision.passage_matching import PassageOptions, Seeds, passages_with_first
from ..decision.passage_words import CorpusWords
from ..io.encoding import encode_text
from .bands import BandIndex
from .group_commit import Write
from .models import DocumentIn, Limits, PassageDocument
from .state import COMMIT_DELAY, Service
from .store import Store

MAX_CANDIDATES = 1000
"""Stored documents compared with one text, at most: those sharing the most seeds with it;
also the documents read from any one seed's bucket."""

_ALIGN_BLOCK = 64
"""Candidates whose texts are read and aligned with the query at once: bounded memory."""


@dataclass
class SeededTexts:
    """A batch's texts as stored (UTF-8) and each one's distinct seeds (uint64, ascending:
    the top 32 bits of the job's seeds, as ``Seeds.by_seed`` compares them)."""

    texts: list[bytes]
    seeds: list[np.ndarray]

    def rows(self, positions: list[int]) -> list[tuple[bytes, bytes]]:
        """The store's ``(seeds, text)`` bytes of the texts at ``positions``."""
        return [(self.seeds[p].astype(np.uint32).tobytes(), self.texts[p]) for p in positions]


def distinct_seeds(texts: list[bytes], min_words: int) -> list[np.ndarray]:
    """Each text's distinct sampled seeds (uint64, ascending), as the passages job samples
    them: none for a text shorter than ``min_words`` words."""
    hashes, offsets = CorpusWords().add(texts)
    seeds = Seeds(min_words)
    seeds.add(hashes, offsets, 0)
    by_seed, docs, _ = seeds.by_seed()
    order = np.lexsort((by_seed, docs))
    by_seed, docs = by_seed[order], docs[order]
    new = np.ones(len(by_seed), dtype=bool)
    new[1:] = (by_seed[1:] != by_seed[:-1]) | (docs[1:] != docs[:-1])
    by_seed, docs = by_seed[new], docs[new]
    bounds = np.searchsorted(docs, np.arange(len(texts) + 1)).tolist()
    return [by_seed[a:b] for a, b in itertools.pairwise(bounds)]


class PassagesService(Service):
    """:class:`Service` that also answers ``POST /passages`` (:meth:`passages`)."""

    def __init__(self, store: Store, commit_delay: float = COMMIT_DELAY) -> None:
        super().__init__(store, commit_delay)
        assert self.settings.passages, "a passages service needs a --passages folder"
        self.options = PassageOptions()
        keys, seeds, docs = store.seeds()
        self.seed_index = BandIndex().added_entries(seeds, docs, len(keys))

    def stats(self) -> dict[str, Any]:
        return {
            "passages": {
                "min_words": self.options.min_words,
                "min_similarity": self.options.min_similarity,
            },
            "max_candidates": MAX_CANDIDATES,
            "seed_index_bytes": self.seed_index.nbytes,
        }

    def warm(self) -> None:
        """:meth:`Service.warm`, then the seeds, the seed index and the passages of texts of
        each kind."""
        super().warm()
        words = [f"w{i}" for i in range(120)]
        shared = " ".join(words[:70])
        texts = [encode_text(t) for t in (f"{shared} Stra\u00dfe \u6587\u5b57", f"x {shared} y", "short")]
        seeds = distinct_seeds(texts, self.options.min_words)
        keys = np.arange(len(texts), dtype=np.int64)
        index = BandIndex().added_entries(np.concatenate(seeds), np.repeat(keys, [len(s) for s in seeds]), 3)
        index.without(keys[:1]).candidates(seeds[1], MAX_CANDIDATES)
        self._aligned(texts[0], texts[1:], [None, None])

    def prepare(self, documents: list[DocumentIn], limits: Limits) -> tuple[np.ndarray, list[int]]:
        """:meth:`Service.prepare`, once every document is a text: a fingerprint has no
        words to find passages in (422)."""
        for p, d in enumerate(documents):
            if d.fingerprint is not None:
                raise HTTPException(
                    422,
                    f"documents[{p}].fingerprint: this service keeps texts to find the passages "
                    f"they share (--passages), which a fingerprint cannot give; send the text",
                )
        return super().prepare(documents, limits)

    def _fingerprint_group(self, group: list[Write]) -> None:
        """The fingerprints (:meth:`Service._fingerprint_group`), then every text's seeds, in
        one call for the group."""
        super()._fingerprint_group(group)
        waiting = [write for write in group if write.error is None]
        texts = [encode_text(str(d.text)) for write in waiting for d in write.batch.documents]
        try:
            seeds = distinct_seeds(texts, self.options.min_words)
        except Exception as error:  # those batches alone are refused
            for write in waiting:
                write.error = error
            return
        start = 0
        for write in waiting:
            stop = start + len(write.batch.documents)
            write.sketches = SeededTexts(texts[start:stop], seeds[start:stop])
            start = stop

    def _sketch_rows(self, chosen_of: list[tuple[Write, list[int]]]) -> list[tuple[bytes, bytes]] | None:
        return [row for write, chosen in chosen_of for row in write.sketches.rows(chosen)]

    def _made_visible(
        self, chosen_of: list[tuple[Write, list[int]]], keys: np.ndarray, replaced: np.ndarray
    ) -> None:
        seeds = [write.sketches.seeds[p] for write, chosen in chosen_of for p in chosen]
        docs = np.repeat(keys, [len(s) for s in seeds])
        self.seed_index = self.seed_index.added_entries(np.concatenate(seeds), docs, len(keys))
        super()._made_visible(chosen_of, keys, replaced)  # then change() removes what they replaced

    def change(
        self,
        removed: np.ndarray | None = None,
        added: np.ndarray | None = None,
        keys: np.ndarray | None = None,
    ) -> None:
        super().change(removed, added, keys)
        if removed is not None and removed.size:
            self.seed_index = self.seed_index.without(removed)

    def passages(self, documents: list[PassageDocument], limits: Limits) -> list[dict[str, Any]]:
        """``POST /passages``: for each document (a text, or a stored document by its id
        alone), the passages stored documents share with it, in the seed index visible now
        (a reader takes no lock)."""
        queries = self._query_texts(documents, limits)
        index = self.seed_index
        out = []
        for d, (text, own_key) in zip(documents, queries):
            (seeds,) = distinct_seeds([text], self.options.min_words)
            candidates, truncated = index.candidates(seeds, MAX_CANDIDATES)
            candidates = candidates[candidates != own_key].tolist()
            rows: list[dict[str, Any]] = []
            for start in range(0, len(candidates), _ALIGN_BLOCK):
                stored = self.store.texts(candidates[start : start + _ALIGN_BLOCK])
                names = self.store.by_keys(list(stored))
                keys = sorted(key for key in stored if key in names)  # not removed meanwhile
                found = self._aligned(text, [stored[key] for key in keys], [names[key] for key in keys])
                rows += [{"id_a": d.id, **row} for row in found]
            out.append({"id": d.id, "passages": rows, "truncated": truncated})
        return out

    def _query_texts(self, documents: list[PassageDocument], limits: Limits) -> list[tuple[bytes, int]]:
        """Each document's text (UTF-8) and, for one given by its id alone, its key (else
        -1): a text over the limit is a 413, an id not stored a 404."""
        out = []
        for p, d in enumerate(documents):
            if d.text is not None:
                text = encode_text(d.text)
                if len(text) > limits.max_text_bytes:
                    raise HTTPException(
                        413, f"documents[{p}].text is over the limit of {limits.max_text_bytes:,} bytes"
                    )
                out.append((text, -1))
                continue
            key = self.store.keys_of([str(d.id)]).get(str(d.id))
            stored = None if key is None else self.store.texts([key]).get(key)
            if key is None or stored is None:
                raise HTTPException(
                    404, f"documents[{p}].id: no document {d.id!r} is stored; send its text instead"
                )
            out.append((stored, key))
        return out

    def _aligned(self, text: bytes, stored: list[bytes], ids: list[str | None]) -> list[dict[str, Any]]:
        """The passages ``text`` shares with each of ``stored`` (named ``ids``), in the
        passages job's columns but ``id_a``: by stored document, then where they start in
        ``text``."""
        words = CorpusWords()
        words.add([text, *stored])
        words.freeze()
        m = passages_with_first(words.hashes, words.offsets, self.options)
        start_a, end_a = words.char_offsets(m.doc_a, m.first_a, m.last_a)
        start_b, end_b = words.char_offsets(m.doc_b, m.first_b, m.last_b)
        similarity = np.round(m.similarity, 4).tolist()
        return [
            {
                "id_b": ids[b - 1],
                "start_a": sa,
                "end_a": ea,
                "start_b": sb,
                "end_b": eb,
                "words": w,
                "similarity": s,
            }
            for b, sa, ea, sb, eb, w, s in zip(
                m.doc_b.tolist(),
                start_a.tolist(),
                end_a.tolist(),
                start_b.tolist(),
                end_b.tolist(),
                m.words.tolist(),
                similarity,
            )
        ]
