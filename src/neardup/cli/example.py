"""``neardup dedup --example``: the clusters found in the built-in corpus shown to a person,
with the words each removed copy changes, as either engine found them."""

from __future__ import annotations

from typing import Any


def show_example(documents: list[Any], labels: Any, kept: Any, fingerprints: Any, options: Any) -> None:
    """Each cluster of the example (``labels``, any numbering) with its texts, the kept one
    first, its distance from the kept one, and the words each other member changes; then the
    planted copies left apart, beyond the radius. The clusters go in the order of their first
    member, so both engines show the same."""
    import numpy as np

    from ..index.hamming import hamming

    _, labels = np.unique(labels, return_inverse=True)
    sizes = np.bincount(labels)
    radius = options.radius
    lines = [
        f"\n{int((sizes > 1).sum())} clusters of near-duplicates (Hamming distance <= "
        f"{radius} of {options.config.bits} bits); kept documents marked +"
    ]
    shown = [label for label in dict.fromkeys(labels.tolist()) if sizes[label] > 1]
    for label in shown:
        members = sorted(np.flatnonzero(labels == label).tolist(), key=lambda p: not kept[p])
        first = members[0]
        lines.append("")
        for p in members:
            mark = "+" if kept[p] else "-"
            text = " ".join(documents[p].text.split())
            distance = hamming(fingerprints[p], fingerprints[first])
            lines.append(
                f" {mark} {documents[p].id} (distance {distance}): "
                f"{text[:100]}{'...' if len(text) > 100 else ''}"
            )
            if not kept[p]:
                lines.append(f"     {changes(documents[first].text, documents[p].text)}")
    position = {d.id: p for p, d in enumerate(documents)}
    apart = [
        (p, position[d.original])
        for p, d in enumerate(documents)
        if d.original != d.id and labels[p] != labels[position[d.original]]
    ]
    if apart:
        lines.append(f"\n{len(apart)} edited copies left apart, beyond distance {radius}:")
        for p, o in apart:
            distance = hamming(fingerprints[p], fingerprints[o])
            lines.append(f"   {documents[p].id} (distance {distance} from {documents[o].id})")
            lines.append(f"     {changes(documents[o].text, documents[p].text)}")
    print("\n".join(lines))


def changes(kept: str, other: str, most: int = 4) -> str:
    """The words ``other`` changes in ``kept`` as the fingerprint sees them: case and
    punctuation dropped, a Chinese ideograph a word."""
    import difflib
    import re

    a, b = (re.findall(r"[\u3400-\u9fff]|[^\W\u3400-\u9fff]+", t.casefold()) for t in (kept, other))

    def joined(words: list[str]) -> str:  # ideographs are written without spaces
        return "".join(words) if words and "\u3400" <= words[0] <= "\u9fff" else " ".join(words)

    edits = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        old, new = joined(a[i1:i2]), joined(b[j1:j2])
        if op == "replace":
            edits.append(f"{old!r} -> {new!r}")
        elif op != "equal":
            edits.append(f"{'added' if op == 'insert' else 'removed'} {new or old!r}")
    if not edits:
        return "same words: only case, punctuation or line breaks differ"
    more = f" and {len(edits) - most} more" if len(edits) > most else ""
    return "; ".join(edits[:most]) + more
