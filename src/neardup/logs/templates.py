"""Log templates, mined online: each line is given the template of the lines like it.

A line's *key* is its masked words (:mod:`.masking`). Lines with one key share a template.
A key that no template has yet is matched against the templates of its length: a template
matches when each of its words equals the key's or is a variable the key's word fits
(``rhost=<*>`` fits ``rhost=example.com``; a bare ``<*>`` fits any word, in a template with
``min_constants`` words that are not variables, so ``<*> <*>`` fits nothing by chance).
Otherwise the key makes a new template, and templates that differ in one word only are
merged into one with ``<*>`` there when

- one of them already has a variable there that every other's word fits, or
- ``min_values`` of them or more differ there (user names, host names: words the digit
  rule of the masks cannot see), and the other words hold ``min_constants`` constants.

A merged template keeps the smallest id of those it merged; the others stay valid, as
aliases of it (:meth:`LogTemplates.resolve`), so an id once given out is never taken back.
Memory grows with the templates, not the lines: a bounded cache of keys seen, the
templates, and for each template and word the templates that differ from it there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .._atomic import atomic_write
from .._prefetch import prefetch
from ..io.arrays import string_array
from .masking import DEFAULT_MASKS, VARIABLE, Masker

FORMAT = "neardup-log-templates"
VERSION = 1
_CACHE_LIMIT = 1 << 20  # keys remembered; past it the cache starts again (it is only a cache)
_WINDOW = 4096  # keys looked up at a time: what a change to the templates makes look up again
_BLOCK = 131_072  # lines of Python strings made Arrow at a time (add_lines)


@dataclass(frozen=True)
class Template:
    """A template: its ``id``, its words (``<*>`` where lines differ), how many lines it has
    been given (``count``) and the first of them (``first``)."""

    id: int
    words: tuple[str, ...]
    count: int
    first: str

    @property
    def text(self) -> str:
        """The template as a line: its words joined by spaces."""
        return " ".join(self.words)


class LogTemplates:
    """Templates of log lines, mined as lines arrive (see the module's docstring).

    Args:
        masks: (name, regular expression) pairs masked before the digit rule; see
            :data:`neardup.logs.masking.DEFAULT_MASKS`.
        min_values: a word that differs between this many templates, alike elsewhere, is
            a variable.
        min_constants: the constant words a template needs for a bare ``<*>`` of it to fit
            any word, and for a word to be made a variable by ``min_values``.

    Example:
        >>> templates = LogTemplates()
        >>> templates.add("Connection from 10.0.0.1 port 22")
        (0, True)
        >>> templates.add("Connection from 10.0.0.7 port 2201")
        (0, False)
        >>> templates.template(0).text
        'Connection from <*> port <*>'
    """

    def __init__(
        self, masks: Sequence[tuple[str, str]] = DEFAULT_MASKS, min_values: int = 5, min_constants: int = 3
    ) -> None:
        if not isinstance(min_values, int) or min_values < 2:
            raise ValueError(f"min_values={min_values!r}: give a whole number of 2 or more")
        if not isinstance(min_constants, int) or min_constants < 0:
            raise ValueError(f"min_constants={min_constants!r}: give a whole number of 0 or more")
        self.masker = Masker(masks)
        self.min_values = min_values
        self.min_constants = min_constants
        self._words: list[tuple[str, ...]] = []  # by id; an alias keeps its words of old
        self._parent: list[int] = []  # by id: itself, or the id it was merged into
        self._counts: list[int] = []  # lines given each id itself (not its aliases)
        self._firsts: list[str] = []
        self._constants: list[int] = []  # by id: its words that are not variables
        # Live templates by their first constant word: a line fits one only if it holds that
        # word there. (length, position, word) -> templates; length -> those with none.
        self._anchors: dict[tuple[int, int, str], set[int]] = {}
        self._unanchored: dict[int, set[int]] = {}
        # (length, word position, the other words) -> {word there: template}
        self._siblings: dict[tuple[int, int, tuple[str, ...]], dict[str, int]] = {}
        self._cache = _KeyCache()

    # --- lines in -------------------------------------------------------------------

    def add(self, line: str) -> tuple[int, bool]:
        """Give ``line`` its template: (the template's id, whether the line made it)."""
        before = len(self._words)
        (template,) = self.add_lines([line])
        return int(template), before < len(self._words) and int(template) == before

    def add_lines(self, lines: Sequence[str]) -> np.ndarray:
        """The template of each line, int64 shape (n,), as ``add`` gives them one by one.
        An id may later become an alias of an older one: :meth:`resolve` says which."""
        if len(lines) <= _BLOCK:
            return self.add_texts(string_array(lines))
        # Many lines: a block is made Arrow in a thread while the last is masked, whose
        # threads leave a core idle while Python joins strings.
        blocks = (string_array(lines[start : start + _BLOCK]) for start in range(0, len(lines), _BLOCK))
        return np.concatenate([self.add_texts(texts) for texts in prefetch(blocks)])

    def add_texts(self, texts: pa.Array) -> np.ndarray:
        """:meth:`add_lines` of a pyarrow string array: no Python string made for a line
        whose masked key was seen before."""
        keys, hashes = self.masker.key_array(texts)
        found = np.empty(len(texts), dtype=np.int64)
        start = 0
        while start < len(hashes):
            # The cache answers most lines at once; a line it cannot answer is placed in
            # Python, and where that changed the templates the rest is looked up again.
            window = hashes[start : start + _WINDOW]
            answers = self._cache.lookup(window)
            done = len(window)
            for offset in np.flatnonzero(answers < 0).tolist():
                cleared = self._cache.cleared
                answers[offset] = self._place(int(window[offset]), keys, texts, start + offset)
                if self._cache.cleared != cleared:
                    done = offset + 1
                    break
            found[start : start + done] = answers[:done]
            start += done
        counts = np.bincount(found, minlength=len(self._counts)) if found.size else found
        for template in np.flatnonzero(counts).tolist():
            self._counts[template] += int(counts[template])
        return found

    def _place(self, hashed: int, keys: pa.Array, texts: pa.Array, at: int) -> int:
        """The template of line ``at``, whose key the cache has not answered."""
        template = self._cache.get(hashed)  # placed since the cache was looked up
        if template is not None:
            return template
        key = keys[at].as_py()
        words = tuple(key.split(" ")) if key else ()
        template = self._match(words)
        if template is None:
            template = self._create(words, texts[at].as_py())  # which may merge it into an older one
            while self._parent[template] != template:
                template = self._parent[template]
            self._cache.clear()  # a new template can be a better fit for keys seen before
        self._cache.put(hashed, template)
        return template

    def _match(self, words: tuple[str, ...]) -> int | None:
        """The live template ``words`` fit, with the most constants (then the oldest)."""
        length = len(words)
        candidates = set(self._unanchored.get(length, ()))
        for position, word in enumerate(words):
            candidates.update(self._anchors.get((length, position, word), ()))
        best, best_rank = None, (-1, 0)
        for template in candidates:
            constants = self._constants[template]
            rank = (constants, -template)
            if rank > best_rank and self._fit(self._words[template], words, constants >= self.min_constants):
                best, best_rank = template, rank
        return best

    @staticmethod
    def _fit(mine: tuple[str, ...], words: tuple[str, ...], bare: bool) -> bool:
        """Whether ``words`` fit the template ``mine``; a bare ``<*>`` fits any word if ``bare``."""
        return all(
            m == w or (VARIABLE in m and (bare or m != VARIABLE) and _fits(m, w)) for m, w in zip(mine, words)
        )

    # --- templates made and merged ----------------------------------------------------

    def _create(self, words: tuple[str, ...], line: str) -> int:
        template = len(self._words)
        self._words.append(words)
        self._constants.append(0)
        self._parent.append(template)
        self._counts.append(0)
        self._firsts.append(line)
        self._enter(template)
        return template

    def _enter(self, template: int) -> None:
        """Make ``template`` live, then merge the first group of it its words call for (the
        merged template is entered afresh, and so merges on)."""
        words = self._words[template]
        self._constants[template] = _constants(words)
        self._anchor(template).add(template)
        groups = []
        for position, word in enumerate(words):
            group = self._siblings.setdefault((len(words), position, _without(words, position)), {})
            group[word] = template
            groups.append(group)
        for position, group in enumerate(groups):
            if self._merge_group(position, group):
                return

    def _anchor(self, template: int) -> set[int]:
        """The set of live templates ``template`` is filed under for :meth:`_match`."""
        words = self._words[template]
        for position, word in enumerate(words):
            if VARIABLE not in word:
                return self._anchors.setdefault((len(words), position, word), set())
        return self._unanchored.setdefault(len(words), set())

    def _leave(self, template: int) -> None:
        words = self._words[template]
        self._anchor(template).discard(template)
        for position, word in enumerate(words):
            key = (len(words), position, _without(words, position))
            group = self._siblings.get(key)
            if group is not None and group.get(word) == template:
                del group[word]
                if not group:
                    del self._siblings[key]

    def _merge_group(self, position: int, group: dict[str, int]) -> bool:
        """Merge the templates of ``group`` (alike but at ``position``) if the rules say so."""
        if len(group) < 2:
            return False
        rest = _without(self._words[next(iter(group.values()))], position)
        enough = _constants(rest) >= self.min_constants
        general = next(
            (
                word
                for word in sorted(group)
                if VARIABLE in word
                and (word != VARIABLE or enough)
                and all(_fits(word, other) for other in group)
            ),
            None,
        )
        if general is None and len(group) >= self.min_values and enough:
            general = VARIABLE
        if general is None:
            return False
        members = sorted(group.values())
        target = members[0]
        for member in members:
            self._leave(member)
        for member in members[1:]:
            self._parent[member] = target
        self._words[target] = (*rest[:position], general, *rest[position:])
        self._cache.clear()
        self._enter(target)
        return True

    # --- templates out ----------------------------------------------------------------

    def resolve(self, ids: np.ndarray | Iterable[int]) -> np.ndarray:
        """The live template each of ``ids`` is now (itself, or the one it was merged into)."""
        return self._roots()[np.asarray(ids, dtype=np.int64)]

    def _roots(self) -> np.ndarray:
        parent = np.asarray(self._parent, dtype=np.int64)
        while True:  # a merged template's target is older, so this ends
            grand = parent[parent]
            if np.array_equal(grand, parent):
                return parent
            parent = grand

    def template(self, template_id: int) -> Template:
        """The template ``template_id`` is now (an alias gives the one it was merged into)."""
        if not 0 <= template_id < len(self._words):
            raise KeyError(f"no template {template_id}: ids run from 0 to {len(self._words) - 1}")
        roots = self._roots()
        root = int(roots[template_id])
        count = int(np.asarray(self._counts, dtype=np.int64)[roots == root].sum())
        return Template(root, self._words[root], count, self._firsts[root])

    def templates(self) -> list[Template]:
        """Every live template, by id."""
        roots = self._roots()
        counts = np.bincount(roots, weights=np.asarray(self._counts, dtype=np.float64), minlength=len(roots))
        return [
            Template(t, self._words[t], int(counts[t]), self._firsts[t])
            for t in np.flatnonzero(roots == np.arange(len(roots))).tolist()
        ]

    @property
    def next_id(self) -> int:
        """The id the next new template will get: ids run from 0 to ``next_id - 1``."""
        return len(self._words)

    def __len__(self) -> int:
        """The number of live templates."""
        return int(np.count_nonzero(self._roots() == np.arange(len(self._parent))))

    # --- state ------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the templates to ``path`` (JSON), atomically: a later :meth:`load` goes on
        as if the lines had never stopped coming."""
        state = {
            "format": FORMAT,
            "version": VERSION,
            "masks": [list(mask) for mask in self.masker.masks],
            "min_values": self.min_values,
            "min_constants": self.min_constants,
            "templates": [
                [list(words), parent, count, first]
                for words, parent, count, first in zip(self._words, self._parent, self._counts, self._firsts)
            ],
        }
        with atomic_write(path, "w") as f:
            json.dump(state, f, ensure_ascii=False)

    @classmethod
    def load(cls, path: str | os.PathLike) -> LogTemplates:
        """The templates :meth:`save` wrote to ``path``."""
        try:
            state = json.loads(Path(path).read_text(encoding="utf-8"))
            if state.get("format") != FORMAT:
                raise ValueError("not a file of log templates")
            if state.get("version") != VERSION:
                raise ValueError(f"version {state.get('version')!r}; this neardup reads version {VERSION}")
            mined = cls([tuple(m) for m in state["masks"]], state["min_values"], state["min_constants"])
            for words, parent, count, first in state["templates"]:
                mined._words.append(tuple(words))
                mined._parent.append(int(parent))
                mined._counts.append(int(count))
                mined._firsts.append(str(first))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: cannot read log templates: {e}") from None
        for template, parent in enumerate(mined._parent):
            words = mined._words[template]
            mined._constants.append(_constants(words))
            if parent == template:
                mined._anchor(template).add(template)
                for position, word in enumerate(words):
                    group = mined._siblings.setdefault((len(words), position, _without(words, position)), {})
                    group[word] = template
        return mined

    def settings(self) -> dict[str, Any]:
        """The settings a saved state holds, for a caller to compare with its own."""
        return {
            "masks": [list(m) for m in self.masker.masks],
            "min_values": self.min_values,
            "min_constants": self.min_constants,
        }


class _KeyCache:
    """The template of each masked key seen lately, by the key's 64-bit hash (XXH3): a line's
    key is never made a Python string once seen. Keys collide with odds of about 1 in
    2**64 / (the keys cached)**2, below 1e-7 for a million keys.

    A block of hashes is looked up at once in a sorted copy of the cache, refreshed as the
    cache grows (by an eighth, so the copies cost O(n log n) in all): what the copy lacks is
    answered by :meth:`get`, one line at a time.
    """

    def __init__(self) -> None:
        self._templates: dict[int, int] = {}
        self._sorted = np.empty(0, dtype=np.uint64)
        self._sorted_templates = np.empty(0, dtype=np.int64)
        self.cleared = 0  # times the cache was cleared: what it answered may have changed

    def get(self, hashed: int) -> int | None:
        return self._templates.get(hashed)

    def put(self, hashed: int, template: int) -> None:
        if len(self._templates) >= _CACHE_LIMIT:  # it is only a cache: start again
            self.clear()
        self._templates[hashed] = template

    def clear(self) -> None:
        self._templates.clear()
        self._sorted = self._sorted[:0]
        self._sorted_templates = self._sorted_templates[:0]
        self.cleared += 1

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """The template of each of ``hashes`` (uint64) that the sorted copy holds; -1 for
        the rest, which :meth:`get` may still know."""
        missing = len(self._templates) - len(self._sorted)
        if missing and 8 * missing >= len(self._sorted):
            self._refresh()
        if not len(self._sorted):
            return np.full(len(hashes), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._sorted, hashes), len(self._sorted) - 1)
        return np.where(self._sorted[at] == hashes, self._sorted_templates[at], -1)

    def _refresh(self) -> None:
        hashes = np.fromiter(self._templates.keys(), dtype=np.uint64, count=len(self._templates))
        templates = np.fromiter(self._templates.values(), dtype=np.int64, count=len(self._templates))
        order = np.argsort(hashes)
        self._sorted, self._sorted_templates = hashes[order], templates[order]


def _without(words: tuple[str, ...], position: int) -> tuple[str, ...]:
    return words[:position] + words[position + 1 :]


def _constants(words: tuple[str, ...]) -> int:
    return sum(VARIABLE not in word for word in words)


_FIT_PATTERNS: dict[str, re.Pattern[str]] = {}


def _fits(general: str, word: str) -> bool:
    """Whether ``word`` fits ``general``, whose ``<*>`` stand for any text (none included)."""
    if general == VARIABLE:
        return True
    pattern = _FIT_PATTERNS.get(general)
    if pattern is None:
        if len(_FIT_PATTERNS) > 4096:
            _FIT_PATTERNS.clear()
        pattern = re.compile(".*".join(map(re.escape, general.split(VARIABLE))), re.DOTALL)
        _FIT_PATTERNS[general] = pattern
    return pattern.fullmatch(word) is not None
