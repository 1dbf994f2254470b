"""Baseline forecasters, evaluated like models but offline and deterministic.

- ``baseline:uniform`` — a seeded uniform pick: one option uniformly (single-answer), or a
  uniformly random non-empty subset (multi-answer). The draw depends only on
  (seed, q_id, trial), never on evaluation order.
- ``baseline:first`` — always the first option (letter A).
- ``baseline:no`` — "No" on yes_no questions; elsewhere the option whose label is a plain
  negation ("No", "None", "None of the above", "Neither", …) if there is one, else the
  first option.
- ``baseline:base_rate`` — the most frequent gold pattern of the train split per bucket
  (yes_no, binary_named, mc_single, mc_multi): the most frequent gold letter among the
  letters the question has (ties → earlier letter); on mc_multi the m most frequent letters
  where m is the most frequent gold cardinality (ties → smaller m). A bucket absent from the
  train split falls back to the letter counts of the whole split, then to letter A.

Each answer is written as one assistant message holding ``\\boxed{…}`` in the same label
form a model would use, so the trace, the parser and the scorer treat it like any reply.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from oracleproto.letters import answer_indices, format_answer

NEGATION_LABELS = frozenset({"no", "none", "none of the above", "neither", "nobody", "no one", "not"})


def bucket_of(question_type: str, choice_type: str) -> str:
    if question_type == "multiple_choice":
        return "mc_single" if choice_type == "single" else "mc_multi"
    return question_type


def boxed_answer(question_type: str, options: Sequence[str], indices: Iterable[int]) -> str:
    """The box text a model would write for ``indices``: Yes/No, a label, or letters."""
    chosen = sorted(set(indices))
    if question_type == "yes_no":
        return "\\boxed{Yes}" if chosen == [0] else "\\boxed{No}"
    if question_type == "binary_named":
        return "\\boxed{" + options[chosen[0]] + "}"
    return "\\boxed{" + format_answer(chosen) + "}"


def uniform_indices(seed: int, q_id: str, trial: int, n_options: int, choice_type: str) -> list[int]:
    digest = hashlib.sha256(f"uniform|{seed}|{q_id}|{trial}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    if choice_type == "single":
        return [rng.randrange(n_options)]
    # a uniform non-empty subset: draw a non-zero bit mask
    mask = rng.randrange(1, 2**n_options)
    return [i for i in range(n_options) if mask >> i & 1]


def negation_index(options: Sequence[str]) -> int:
    for index, label in enumerate(options):
        if label.strip().casefold() in NEGATION_LABELS:
            return index
    return 0


@dataclass(frozen=True)
class BaseRates:
    """Gold-letter statistics of a train split, per bucket."""

    letter_counts: dict[str, Counter[int]]
    cardinality_counts: dict[str, Counter[int]]
    pooled: Counter[int]

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str, str]]) -> BaseRates:
        """``rows`` of (question_type, choice_type, answer)."""
        letters: dict[str, Counter[int]] = {}
        sizes: dict[str, Counter[int]] = {}
        pooled: Counter[int] = Counter()
        for question_type, choice_type, answer in rows:
            bucket = bucket_of(question_type, choice_type)
            indices = answer_indices(answer)
            letters.setdefault(bucket, Counter()).update(indices)
            sizes.setdefault(bucket, Counter())[len(indices)] += 1
            pooled.update(indices)
        return cls(letters, sizes, pooled)

    def predict(self, question_type: str, choice_type: str, n_options: int) -> list[int]:
        bucket = bucket_of(question_type, choice_type)
        counts = self.letter_counts.get(bucket) or self.pooled
        ranked = sorted(range(n_options), key=lambda i: (-counts.get(i, 0), i))
        if bucket != "mc_multi":
            return ranked[:1]
        sizes = self.cardinality_counts.get(bucket) or Counter({1: 1})
        size = min(min(sizes, key=lambda m: (-sizes[m], m)), n_options)
        return sorted(ranked[:size])


def baseline_indices(
    name: str,
    *,
    q_id: str,
    trial: int,
    question_type: str,
    choice_type: str,
    options: Sequence[str],
    seed: int,
    base_rates: BaseRates | None,
) -> list[int]:
    n = len(options)
    if name == "uniform":
        return uniform_indices(seed, q_id, trial, n, "single" if question_type != "multiple_choice" else choice_type)
    if name == "first":
        return [0]
    if name == "no":
        return [1] if question_type == "yes_no" else [negation_index(options)]
    if name == "base_rate":
        if base_rates is None:
            raise ValueError("baseline:base_rate needs the train split of its cutoff")
        return base_rates.predict(question_type, choice_type, n)
    raise ValueError(f"unknown baseline {name!r}")


def baseline_reply(name: str, question_type: str, options: Sequence[str], indices: Sequence[int]) -> str:
    return f"Baseline forecaster '{name}' (no reasoning, no search) picks {format_answer(indices)}.\n{boxed_answer(question_type, options, indices)}"
