"""What ``--cosine T`` runs: a SimHash radius chosen from the binomial model, then exact checks.

Each fingerprint bit of two documents at angle theta differs with probability theta / pi
(Charikar 2002), independently across bits (each bit has its own hash), so their distance is
Binomial(bits, arccos(T) / pi) for a pair at cosine T. The radius is the smallest that holds
such a pair with probability >= 0.95 (pairs more similar: more likely), capped at what the
index serves; every candidate is then verified on the exact cosine of the weighted features.
"""

from __future__ import annotations

import math

from .._errors import ConfigError
from ..index.plan import MIH_MAX_DISTANCE

TARGET_RECALL = 0.95


def within(distance: int, bits: int, similarity: float) -> float:
    """The chance that a pair at cosine ``similarity`` lies within ``distance`` bits."""
    p = math.acos(max(-1.0, min(1.0, similarity))) / math.pi
    return sum(math.comb(bits, d) * p**d * (1 - p) ** (bits - d) for d in range(distance + 1))


def cosine_radius(threshold: float, bits: int) -> tuple[int, float]:
    """(radius, chance that a pair at ``threshold`` lies within it): the smallest radius with
    that chance >= 0.95, or the largest the index serves at ``bits`` if none is."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise ConfigError(f"cosine={threshold!r} must be a number in (0, 1], e.g. 0.95")
    largest = MIH_MAX_DISTANCE[bits]
    for k in range(largest + 1):
        chance = within(k, bits, threshold)
        if chance >= TARGET_RECALL:
            return k, chance
    return largest, within(largest, bits, threshold)


def lowest_served(bits: int) -> float:
    """The lowest cosine threshold whose 95% radius the index serves at ``bits`` (to 0.001)."""
    low, high = 0.0, 1.0
    while high - low > 1e-4:
        middle = (low + high) / 2
        if within(MIH_MAX_DISTANCE[bits], bits, middle) >= TARGET_RECALL:
            high = middle
        else:
            low = middle
    return math.ceil(high * 1000) / 1000


def describe_cosine(threshold: float, bits: int) -> str:
    """One line for the summary: the radius and the recall it expects at the threshold."""
    k, chance = cosine_radius(threshold, bits)
    line = (
        f"--cosine {threshold:g}: SimHash radius {k} of {bits} bits, which holds a pair at cosine "
        f"{threshold:g} with probability {chance:.3f}"
    )
    if chance < TARGET_RECALL:
        line += (
            f" (below {TARGET_RECALL:.2f}: the index serves radius {k} at most at {bits} bits; "
            f"{'--bits 128 or ' if bits == 64 else ''}a threshold >= {lowest_served(bits):g} "
            "reaches it, or state it as --jaccard)"
        )
    return line


def checked_cosine_radius(threshold: float, bits: int) -> int:
    """The radius of :func:`cosine_radius`, or a ConfigError saying what to do where the index
    cannot serve one that reaches 95% at the threshold."""
    k, chance = cosine_radius(threshold, bits)
    if chance < TARGET_RECALL:
        raise ConfigError(
            f"cosine={threshold:g} at {bits} bits needs a radius the index does not serve: radius {k} "
            f"holds a pair at cosine {threshold:g} with probability {chance:.2f}. Use a threshold >= "
            f"{lowest_served(bits):g}{' or bits=128' if bits == 64 else ''}, state it as a Jaccard "
            f"threshold (jaccard=), or accept that recall with max_distance={k}, "
            f"verify=('cosine', {threshold:g})"
        )
    return k


def explain_cosine(threshold: float, bits: int) -> str:
    """What ``--cosine threshold`` runs, in a few lines (``--explain-plan``)."""
    k, chance = cosine_radius(threshold, bits)
    levels = sorted({min(1.0, threshold + 0.02), threshold, threshold - 0.02, threshold - 0.05}, reverse=True)
    chances = ", ".join(f"cos={c:.2f}: {within(k, bits, c):.3f}" for c in levels if c > 0)
    return "\n".join(
        [
            describe_cosine(threshold, bits),
            f"  chance that a pair lies within the radius: {chances}",
            "  every pair within it that the rule needs is verified on the exact cosine of the "
            "fingerprint's weighted features: no pair below the threshold counts",
        ]
        + (
            ["  dedup refuses this threshold at these bits (see above for what reaches it)"]
            if chance < TARGET_RECALL
            else []
        )
    )
