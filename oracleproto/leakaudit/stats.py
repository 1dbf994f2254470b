"""The statistics of the leak audit and the cutoff probe: pure functions, no I/O.

- :func:`wilson_interval` / :func:`proportion`: a rate with its Wilson score interval
  (95 % by default), the interval the paper reports for its 3/270 residual leak rate.
- :func:`stratified_share`: a population-weighted share across strata sampled at different
  rates (a filter's recall, the leak-conditional pass-through). The point estimate weights
  each stratum's leak rate by its population; the interval is the equal-tailed Jeffreys
  posterior interval of that share (each stratum's rate drawn from Beta(x + ½, n − x + ½),
  a fixed number of seeded draws in pure Python), which stays defined when a stratum's
  sample is all leaks or all clean, where a delta-method interval collapses.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping
from dataclasses import dataclass

Z_95 = 1.959963984540054  # the standard normal quantile of 0.975
SHARE_DRAWS = 10_000
SHARE_SEED = 0


def wilson_interval(successes: float, n: float, z: float = Z_95) -> tuple[float, float] | None:
    """Wilson score interval of ``successes / n`` (None for n = 0).

    ``successes`` may be fractional (a question's share of correct trials); the formula is
    the usual one in p̂ and n. For 3 of 270 it gives (0.0038, 0.0322): the paper's
    "Wilson 95 % upper bound ≈ 3.2 %".
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n], got {successes} of {n}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # the interval always holds p̂; min/max only undo float rounding at p̂ = 0 or 1
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


@dataclass(frozen=True)
class Proportion:
    """``successes`` of ``n`` with the rate and its Wilson interval (all None when n = 0)."""

    successes: float
    n: float
    rate: float | None
    low: float | None
    high: float | None

    def to_json(self) -> dict[str, float | None]:
        return {"successes": self.successes, "n": self.n, "rate": self.rate, "ci_low": self.low, "ci_high": self.high}

    def covers(self, value: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= value <= self.high


def proportion(successes: float, n: float, z: float = Z_95) -> Proportion:
    interval = wilson_interval(successes, n, z)
    if interval is None:
        return Proportion(successes, n, None, None, None)
    return Proportion(successes, n, successes / n, interval[0], interval[1])


@dataclass(frozen=True)
class Stratum:
    """A stratum of a stratified sample: its population and the labelled part of its sample."""

    population: int
    positives: int  # labelled positives (leaks) in the sample
    labelled: int  # labelled sample size (positives + negatives)

    def __post_init__(self) -> None:
        if not 0 <= self.positives <= self.labelled or self.population < 0:
            raise ValueError(f"stratum counts out of range: {self}")


@dataclass(frozen=True)
class Share:
    """A population-weighted share with its Jeffreys interval; ``reason`` when undefined."""

    estimate: float | None
    low: float | None
    high: float | None
    reason: str | None = None

    def to_json(self) -> dict[str, float | str | None]:
        return {"estimate": self.estimate, "ci_low": self.low, "ci_high": self.high, "undefined_because": self.reason}


def _share(rates: Mapping[str, float], strata: Mapping[str, Stratum], numerator: Collection[str]) -> float | None:
    total = sum(strata[name].population * rates[name] for name in strata)
    if total <= 0:
        return None
    return sum(strata[name].population * rates[name] for name in numerator) / total


def stratified_share(
    strata: Mapping[str, Stratum],
    numerator: Collection[str],
    *,
    draws: int = SHARE_DRAWS,
    seed: int = SHARE_SEED,
    level: float = 0.95,
) -> Share:
    """Σ_{s ∈ numerator} N_s p_s / Σ_s N_s p_s, with p_s each stratum's labelled positive rate.

    Strata with no population are left out. A populated stratum with no labelled sample
    makes the share undefined (its rate is unknown), as does an estimate of no positives
    anywhere (the share of nothing).
    """
    populated = {name: s for name, s in strata.items() if s.population > 0}
    unlabelled = sorted(name for name, s in populated.items() if s.labelled == 0)
    if unlabelled:
        return Share(None, None, None, f"no labelled sample in {', '.join(unlabelled)}")
    parts = [name for name in numerator if name in populated]
    estimate = _share({name: s.positives / s.labelled for name, s in populated.items()}, populated, parts)
    if estimate is None:
        return Share(None, None, None, "no positives labelled in any stratum")
    rng = random.Random(seed)
    names = sorted(populated)
    samples = []
    for _ in range(draws):
        rates = {name: _jeffreys_draw(rng, populated[name]) for name in names}
        value = _share(rates, populated, parts)
        if value is not None:
            samples.append(value)
    samples.sort()
    tail = (1 - level) / 2
    low = samples[math.floor(tail * (len(samples) - 1))]
    high = samples[math.ceil((1 - tail) * (len(samples) - 1))]
    return Share(estimate, low, high)


def _jeffreys_draw(rng: random.Random, stratum: Stratum) -> float:
    return rng.betavariate(stratum.positives + 0.5, stratum.labelled - stratum.positives + 0.5)
