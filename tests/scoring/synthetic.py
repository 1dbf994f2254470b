"""Small random trial tables (pure Python) covering every stratum and trial class."""

from __future__ import annotations

import random

import pyarrow as pa

from oracleproto.letters import answer_indices, format_answer

ERRORS = ("network", "rate_limit", "server_5xx", "unknown")


def random_question(rng: random.Random, q_id: str) -> dict:
    kind = rng.choice(["yes_no", "binary_named", "mc_single", "mc_multi"])
    if kind == "yes_no":
        options, qtype = ["Yes", "No"], "yes_no"
    elif kind == "binary_named":
        options, qtype = ["Red", "Blue"], "binary_named"
    else:
        options, qtype = [f"opt{i}" for i in range(rng.randint(3, 7))], "multiple_choice"
    k = len(options)
    m = rng.randint(2, k) if kind == "mc_multi" else 1
    gold = rng.sample(range(k), m)
    return dict(q_id=q_id, question_type=qtype, choice_type="multi" if m > 1 else "single", options=options, answer=format_answer(gold))


def random_pred(rng: random.Random, question: dict) -> str:
    k = len(question["options"])
    gold = answer_indices(question["answer"])
    if rng.random() < 0.4:
        chosen = set(gold) if rng.random() < 0.6 else set(rng.sample(gold, rng.randint(1, len(gold))))
    else:
        chosen = set(rng.sample(range(k), rng.randint(1, k if question["choice_type"] == "multi" else min(k, 2))))
    return format_answer(chosen)


def random_belief(rng: random.Random, question: dict) -> list[float]:
    k = len(question["options"])
    raw = [rng.random() for _ in range(k)]
    if question["choice_type"] == "single":
        total = sum(raw)
        return [x / total for x in raw]
    return raw


def random_rows(seed: int, n_models: int = 3, n_questions: int = 8, max_trials: int = 4, beliefs: bool = False) -> list[dict]:
    rng = random.Random(seed)
    questions = [random_question(rng, f"q{i:02d}") for i in range(n_questions)]
    rows = []
    for m in range(n_models):
        n_trials = rng.randint(1, max_trials)
        for question in questions:
            if rng.random() < 0.15:
                continue  # this model never saw the question
            cutoff_all = rng.random() < 0.1
            for trial in range(1, n_trials + 1):
                roll = rng.random()
                error = pred = None
                if cutoff_all or roll < 0.08:
                    error = "skipped_training_cutoff"
                elif roll < 0.18:
                    error = rng.choice(ERRORS)
                elif roll < 0.3:
                    pred = None  # parse failure
                else:
                    pred = random_pred(rng, question)
                row = dict(question, model=f"model-{m}", trial=trial, pred=pred, error=error, cost_usd=round(rng.random() / 100, 6))
                if beliefs:
                    row["belief"] = random_belief(rng, question) if error is None and rng.random() < 0.8 else None
                rows.append(row)
    return rows


def to_table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows)
