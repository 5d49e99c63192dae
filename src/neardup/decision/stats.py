"""What a dedup run did, and the summary both engines print of it."""

from __future__ import annotations

from dataclasses import dataclass, field


def format_bytes(n: int) -> str:
    """``n`` bytes in the unit that shows it as 1 to 1,023.9: "812 B", "3.4 KiB", "2.0 GiB"."""
    if n < 1024:
        return f"{n:,} B"
    size = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        size /= 1024
        if round(size, 1) < 1024 or unit == "TiB":
            break
    return f"{size:,.1f} {unit}"


@dataclass
class DedupStats:
    """What a run did, for its summary (:meth:`format`)."""

    documents: int = 0
    skipped: int = 0
    skip_summary: str = ""
    input_bytes: int = 0
    text_bytes: int | None = 0
    """Bytes of text read; None where the engine does not count them (Spark)."""
    candidate_pairs: int | None = None
    checked_pairs: int | None = None
    similar_pairs: int | None = None
    clusters: int = 0
    duplicates: int = 0
    against_matches: int = 0
    featureless: int = 0
    featureless_policy: str = "keep"
    chained: int = 0
    removed_text_bytes: int = 0
    plan: str = ""
    engine: str = ""
    """Where it ran, when not on this machine: "on Spark (local[8])"."""
    seconds: dict[str, float] = field(default_factory=dict)

    def format(self) -> str:
        """The summary, a few lines for stderr."""
        dropped = self.featureless if self.featureless_policy == "drop" else 0
        kept = self.documents - self.duplicates - self.against_matches - dropped
        read = f"read {self.documents:,} documents"
        if self.text_bytes is not None:
            read += f" ({format_bytes(self.text_bytes)} of text)"
        if self.engine:
            read += f" {self.engine}"
        lines = [read + (f", skipped {self.skipped:,}:" if self.skipped else "")]
        if self.skipped:
            lines.append(self.skip_summary)
        if self.featureless:
            what = {
                "keep": "kept, each compared with nothing",
                "drop": "dropped",
                "compare": "compared as any other (all share fingerprint 0)",
            }[self.featureless_policy]
            lines.append(
                f"{self.featureless:,} documents had no features (empty, blank or punctuation "
                f"only): {what} (--featureless)"
            )
        if self.plan:
            lines.append(self.plan)
        found = f"{self.clusters:,} clusters of near-duplicates"
        if self.candidate_pairs is not None:
            found += f", {self.candidate_pairs:,} pairs between distinct fingerprints"
        if self.checked_pairs is not None:
            found += f"; {self.similar_pairs:,} of {self.checked_pairs:,} pairs checked passed verification"
        lines.append(found)
        removed = f"removed {self.duplicates:,} near-duplicates"
        if dropped:
            removed += f" and {dropped:,} documents without features"
        if self.against_matches:
            removed += f" and {self.against_matches:,} near-duplicates of the index"
        removed += f", kept {kept:,} documents"
        if self.text_bytes is not None:
            removed += (
                f"; {format_bytes(self.removed_text_bytes)} of text saved "
                f"({100 * self.removed_text_bytes / max(self.text_bytes, 1):.1f}%)"
            )
        lines.append(removed)
        if self.chained:
            lines.append(
                f"{self.chained:,} removed documents are farther than the radius from every kept "
                f"one, linked to it only through others (--cluster components)"
            )
        lines.append(
            "time: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in self.seconds.items())
        )
        return "\n".join(lines)
