"""What to do with input that is not a document: stop with an error naming it, or leave it
out and account for it."""

from __future__ import annotations

import threading
from collections import Counter

from .._errors import FormatError

ERRORS = ("raise", "skip")


def check_errors(errors: str) -> None:
    """Refuse a policy for bad records other than ``ERRORS``."""
    if errors not in ERRORS:
        raise ValueError(f"errors={errors!r} is not allowed; choose 'raise' or 'skip'")


class Rejects:
    """The policy for bad input and the record of what it left out.

    Args:
        errors: ``"raise"``: the first bad record raises :class:`FormatError` naming its file
            and line or row. ``"skip"``: it is left out, counted by reason, and the first
            ``keep_examples`` are kept for the summary.
    """

    def __init__(self, errors: str = "raise", keep_examples: int = 20) -> None:
        check_errors(errors)
        self.errors = errors
        self.keep_examples = keep_examples
        self.count = 0
        self.reasons: Counter[str] = Counter()
        self.examples: list[str] = []
        self._lock = threading.Lock()  # JSONL blocks are parsed on two threads

    def reject(self, where: str, problem: str, reason: str) -> None:
        """Record that the record at ``where`` (``file:line``) is bad, or raise.

        Args:
            problem: what is wrong with it, for the message.
            reason: a short category for the counts ("not valid JSON", "no text field").
        """
        message = f"{where}: {problem}"
        if self.errors == "raise":
            raise FormatError(f"{message}; fix it, or skip bad records (--on-error skip, errors='skip')")
        with self._lock:
            self.count += 1
            self.reasons[reason] += 1
            if len(self.examples) < self.keep_examples:
                self.examples.append(message)

    def merge(self, other: Rejects) -> None:
        """Add what ``other`` left out to this record (Spark's tasks each keep their own)."""
        with self._lock:
            self.count += other.count
            self.reasons.update(other.reasons)
            self.examples += other.examples[: max(self.keep_examples - len(self.examples), 0)]

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]  # a lock does not pickle, and a copy needs its own
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def check_share(self, documents: int, max_skipped: float | None = None) -> None:
        """Raise :class:`FormatError` when the records left out are more than
        ``max_skipped`` (a fraction in [0, 1]) of those read, or, without it, all of them
        (one at least): a wrong ``--text-field`` skips every record, and its empty output
        is no answer.

        Args:
            documents: the records read as documents (those not skipped).
        """
        total = documents + self.count
        if not self.count:
            return
        if max_skipped is None:
            if documents:
                return
            limit = "every record"
        elif self.count > max_skipped * total:
            limit = f"more than --max-skipped {max_skipped:g} of them"
        else:
            return
        reason, n = self.reasons.most_common(1)[0]
        raise FormatError(
            f"skipped {self.count:,} of {total:,} records, {limit}; "
            f"the most common reason: {reason} ({n:,} of them; e.g. {self.examples[0]}); "
            f"fix the options or the input, or allow a larger share with --max-skipped"
        )

    def summary(self) -> str:
        """One line per reason, then the first examples."""
        lines = [f"  {n} {reason}" for reason, n in self.reasons.most_common()]
        lines += [f"    e.g. {example}" for example in self.examples[:10]]
        return "\n".join(lines)


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for messages."""
    names = {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "number",
        float: "number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)
