"""The obviously-right reference of ``LogTemplates``: no cache, no index, every live template
scanned for each line and for each merge."""

from __future__ import annotations

import re

from neardup.logs.masking import VARIABLE, Masker


def fits(general: str, word: str) -> bool:
    pattern = ".*".join(map(re.escape, general.split(VARIABLE)))
    return re.fullmatch(pattern, word, re.DOTALL) is not None


def constants(words: tuple[str, ...]) -> int:
    return sum(VARIABLE not in w for w in words)


class NaiveLogTemplates:
    def __init__(self, min_values: int = 5, min_constants: int = 3, masker: Masker | None = None) -> None:
        self.masker = masker or Masker()
        self.min_values = min_values
        self.min_constants = min_constants
        self.words: list[tuple[str, ...]] = []
        self.parent: list[int] = []
        self.first: list[str] = []
        self.lines: list[int] = []  # each line's template as first given

    def live(self) -> list[int]:
        return [t for t in range(len(self.words)) if self.parent[t] == t]

    def root(self, t: int) -> int:
        while self.parent[t] != t:
            t = self.parent[t]
        return t

    def add(self, line: str) -> None:
        key = self.masker.key(line)
        words = tuple(key.split(" ")) if key else ()
        best = None
        for t in self.live():
            mine = self.words[t]
            bare = constants(mine) >= self.min_constants
            fit = len(mine) == len(words) and all(
                m == w or (VARIABLE in m and (bare or m != VARIABLE) and fits(m, w))
                for m, w in zip(mine, words)
            )
            if fit and (best is None or (constants(mine), -t) > (constants(self.words[best]), -best)):
                best = t
        if best is None:
            best = len(self.words)
            self.words.append(words)
            self.parent.append(best)
            self.first.append(line)
            entering: int | None = best
            while entering is not None:
                entering = self.merge_first(entering)
        self.lines.append(self.root(best))

    def merge_first(self, t: int) -> int | None:
        """Merge the first group of ``t`` the rules call for; the merged template, or None."""
        words = self.words[t]
        for p in range(len(words)):
            rest = words[:p] + words[p + 1 :]
            group = {
                self.words[u][p]: u
                for u in self.live()
                if len(self.words[u]) == len(words) and self.words[u][:p] + self.words[u][p + 1 :] == rest
            }
            if len(group) < 2:
                continue
            enough = constants(rest) >= self.min_constants
            general = None
            for word in sorted(group):
                if VARIABLE in word and (word != VARIABLE or enough) and all(fits(word, o) for o in group):
                    general = word
                    break
            if general is None and len(group) >= self.min_values and enough:
                general = VARIABLE
            if general is None:
                continue
            target = min(group.values())
            for u in group.values():
                self.parent[u] = target
            self.words[target] = (*rest[:p], general, *rest[p:])
            return target
        return None

    def resolved(self) -> list[int]:
        return [self.root(t) for t in self.lines]

    def texts(self) -> dict[int, str]:
        return {t: " ".join(self.words[t]) for t in self.live()}
