"""Seeded hostile rows for the adapter fuzz tests (issue 11: "Trustworthy input").

``seven_records`` and ``futurex_records`` give ``N_ROWS`` Python records, in the
seven-column layout and in FutureX-Past's raw layout (prompt + ground truth): valid rows
mixed with every kind of bad value a real file has carried or could carry — wrong types,
blanks and whitespace variants, invisible, bidi and NUL characters, lone surrogates, huge
cells, very long ids, too few and too many options, malformed answers and dates, duplicate
ids (identical and conflicting), duplicate content under other ids, deeply nested JSON, and
levels that are no integer. Everything comes from ``random.Random(seed)``: the same seed
gives the same rows, so a failure reproduces.

The writers in ``tests/corpus/sources/test_fuzz.py`` put these records into each adapter's
real format with the other side's tools; ``tabular`` maps a record onto what a typed
table (parquet, a DataFrame) can hold.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from collections.abc import Callable
from typing import Any

from oracleproto.contract import RULE_BY_NAME
from oracleproto.corpus.sources.futurex import ground_truth_literal, render_prompt
from oracleproto.letters import letter

SEED = 20_251_111
N_ROWS = 10_000
HUGE = 1_100_000  # characters of a huge cell (more than 1 MiB, the CSV reader's block)
N_HUGE = 3  # huge cells per table: enough to cross every reader's block limit, cheap to build
TEXT_FIELDS = ("id", "choice_type", "question_type", "event", "answer", "end_time")
SEVEN_FIELDS = ("id", "choice_type", "question_type", "event", "options", "answer", "end_time")
LONE_SURROGATE = "\ud800"
_WORDS = ("rain", "vote", "cup", "rate", "launch", "merger", "storm", "index", "prize", "deal", "Zürich", "東京", "café")
# Year 0 is ISO 8601 (Arrow parses it) but no Python date: the audit must quarantine it
# (end_time_out_of_range) before any step turns dates into Python values. Fuzzed once the
# contract has that rule.
YEAR_ZERO = ("0000-01-01",) if "end_time_out_of_range" in RULE_BY_NAME else ()
INVISIBLE = ("\u200b", "\u200d", "\ufeff", "\u2060", "\u202e", "\u2066", "\x00", "\u00a0", "\u3000", "\x1f")


def deep_json(depth: int) -> Any:
    """A list nested ``depth`` levels (parquet refuses ~50; json refuses ~1000 on read)."""
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def _word(rng: random.Random) -> str:
    return rng.choice(_WORDS)


def _date(rng: random.Random) -> str:
    return (dt.date(2020, 1, 1) + dt.timedelta(days=rng.randrange(7 * 365))).isoformat()


def _labels(rng: random.Random, i: int, k: int) -> list[str]:
    return [f"{_word(rng)} {i}-{j}" for j in range(k)]


def valid_seven(rng: random.Random, i: int) -> dict[str, Any]:
    """One valid seven-column record (its id and event are unique to ``i``)."""
    question_type = rng.choice(("yes_no", "binary_named", "multiple_choice"))
    options = ["Yes", "No"] if question_type == "yes_no" else _labels(rng, i, 2 if question_type == "binary_named" else rng.randint(3, 9))
    choice_type = "single" if question_type != "multiple_choice" else rng.choice(("single", "multi"))
    chosen = [rng.randrange(len(options))] if choice_type == "single" else sorted(rng.sample(range(len(options)), rng.randint(1, len(options))))
    return {
        "id": f"fz-{i:05d}",
        "choice_type": choice_type,
        "question_type": question_type,
        "event": f"Will the {_word(rng)} #{i} happen by {_date(rng)}?",
        "options": options,
        "answer": ", ".join(letter(c) for c in chosen),
        "end_time": _date(rng),
        "level": rng.choice((1, 1, 2, 2, 2, 2, 2, 2, 2, 3)),  # default levels are 1 and 2
    }


# ------------------------------------------------------------------------------ hostile values
def _text_variant(rng: random.Random, text: str) -> str:
    """``text`` with hostile characters or whitespace: the kind of value that reads as text."""
    mark = rng.choice(INVISIBLE)
    return rng.choice(
        (
            "",
            " ",
            "\t",
            "\r\n",
            "\u00a0",
            mark,
            mark * 3,
            f" {text} ",
            f"{text}\r\n",
            f"\t{text}\t",
            f"\u00a0{text}\u00a0",
            text.replace(" ", "\t") + "  ",
            mark + text,
            text + mark,
            text[: len(text) // 2] + mark + text[len(text) // 2 :],
            text + LONE_SURROGATE,
            text.upper(),
            text + "\n" + text,
        )
    )


def _wrong_type(rng: random.Random) -> Any:
    """A value of a JSON type no text field takes (numbers are read as their decimal text)."""
    return rng.choice((None, 0, 42, -7, 3.25, 1e300, float("nan"), float("inf"), True, False, [], ["a"], [1, 2], {}, {"k": "v"}, deep_json(rng.choice((3, 40, 70)))))


def _hostile_id(rng: random.Random, record: dict[str, Any]) -> Any:
    qid = record["id"]
    return rng.choice(
        (
            "x" * rng.choice((257, 1_000, 20_000)),
            qid + "\x00",
            f" {qid} ",
            qid + "\u200b",
            12345 + rng.randrange(10**6),
            _text_variant(rng, qid),
            _wrong_type(rng),
        )
    )


def _hostile_options(rng: random.Random, record: dict[str, Any]) -> Any:
    labels = record["options"]
    many = [f"o{j}" for j in range(rng.choice((64, 65, 70, 300)))]
    return rng.choice(
        (
            [],
            [labels[0]],
            many,
            "Yes, No",
            json.dumps(labels),
            repr(labels),
            "[1, 2]",
            "not json",
            "",
            [1, 2],
            [None, "x"],
            [["a"], ["b"]],
            [{"a": 1}, {"b": 2}],
            [labels[0], labels[0].upper() + " "],
            ["", "x"],
            ["\u200b", "x"],
            [LONE_SURROGATE, "x"],
            [_text_variant(rng, label) for label in labels],
            deep_json(rng.choice((5, 80))),
            {"a": "b"},
            5,
            True,
        )
    )


def _hostile_answer(rng: random.Random, record: dict[str, Any]) -> Any:
    return rng.choice(
        ("A, C", "a", "Z", "", " ", "A,,B", "A;B", "AB", " B ", "A C", "C, A", "A, A", "[", "\u0410", "Ａ", "A\x00", "A\u200b", 1, ["A"], None, _wrong_type(rng))
    )


def _hostile_end_time(rng: random.Random, record: dict[str, Any]) -> Any:
    return rng.choice(
        (
            *YEAR_ZERO,
            "0001-01-01",
            "2024-02-30",
            "2023-02-29",
            "2024-02-29",
            "2024-1-1",
            "",
            " ",
            20240101,
            1_717_200_000,
            1.5,
            "2024-01-01T12:00:00Z",
            "2024-01-01 23:59:59+08:00",
            "9999-12-31",
            "1899-12-31",
            "2024-13-01",
            "2024-00-10",
            "01/02/2024",
            " 2024-01-01 ",
            "2024-01-01\x00",
            "２０２４-01-01",
            "2024-01-01" + LONE_SURROGATE,
            True,
            ["2024-01-01"],
            {"date": "2024-01-01"},
        )
    )


def _hostile_level(rng: random.Random, record: dict[str, Any]) -> Any:
    return rng.choice((0, -1, 7, "2", " 3 ", "2.0", 2.0, 2.5, "x", "", None, True, [1], {"l": 1}, 2**70, 1e20, float("nan"), "9" * 30))


def _hostile_category(rng: random.Random, record: dict[str, Any], name: str) -> Any:
    value = record[name]
    return rng.choice(("", value.upper(), value + " ", value.replace("_", " "), "mc", "multiple", "Single", _text_variant(rng, value), _wrong_type(rng)))


def _hostile_event(rng: random.Random, record: dict[str, Any]) -> Any:
    return rng.choice((_text_variant(rng, record["event"]), _wrong_type(rng), record["event"] * 200))


SEVEN_MUTATIONS = {
    "id": _hostile_id,
    "choice_type": lambda rng, r: _hostile_category(rng, r, "choice_type"),
    "question_type": lambda rng, r: _hostile_category(rng, r, "question_type"),
    "event": _hostile_event,
    "options": _hostile_options,
    "answer": _hostile_answer,
    "end_time": _hostile_end_time,
    "level": _hostile_level,
}


Mutations = dict[str, Callable[[random.Random, dict[str, Any]], Any]]


def _mutated(rng: random.Random, record: dict[str, Any], mutations: Mutations) -> dict[str, Any]:
    """``record`` with one to three of ``fields`` hostile, sometimes a key dropped or an
    extra column of mixed or deeply nested values."""
    record = dict(record)
    fields = tuple(mutations)
    for name in rng.sample(fields, rng.randint(1, 3)):
        record[name] = mutations[name](rng, record)
    roll = rng.random()
    if roll < 0.05:
        del record[rng.choice(fields)]
    elif roll < 0.10:
        record["note"] = rng.choice((deep_json(rng.choice((10, 60, 200))), "plain note", 7, [1, "a"], {"x": None}))
    return record


def _duplicate(rng: random.Random, earlier: list[dict[str, Any]], i: int, key: str) -> dict[str, Any]:
    """A copy of an earlier record: identical, conflicting (same id, another field), or
    the same content under a new id."""
    record = dict(rng.choice(earlier))
    kind = rng.random()
    if kind < 0.4:
        return record  # an identical copy (collapsed if the original is kept)
    if kind < 0.7:
        record[key] = f"{record.get(key)}!" if key != "level" else 99
        return record
    record["id"] = f"fz-copy-{i:05d}"
    return record


def _hostile_rows(rng: random.Random, n: int, valid: Callable[[random.Random, int], dict[str, Any]], mutations: Mutations, conflict_key: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    huge_rows = set(rng.sample(range(n), min(N_HUGE, n)))
    for i in range(n):
        roll = rng.random()
        if i in huge_rows:
            record = valid(rng, i)
            record["prompt" if "prompt" in record else "event"] = huge_text(rng, record)
        elif roll < 0.45 or not records:
            record = valid(rng, i)
        elif roll < 0.90:
            record = _mutated(rng, valid(rng, i), mutations)
        else:
            record = _duplicate(rng, records, i, conflict_key)
        records.append(record)
    return records


def huge_text(rng: random.Random, record: dict[str, Any]) -> str:
    if "prompt" in record:
        return render_prompt("Will the long one resolve? " + "background " * (HUGE // 11), ["p", "q", "r"], record["end_time"], "multiple_choice")
    return record["event"] + (" " + _word(rng)) * (HUGE // 5)


def seven_records(seed: int = SEED, n: int = N_ROWS) -> list[dict[str, Any]]:
    """``n`` records in the seven-column layout (plus ``level``), about half hostile."""
    rng = random.Random(seed)
    return _hostile_rows(rng, n, valid_seven, SEVEN_MUTATIONS, "answer")


# ------------------------------------------------------------------------------ FutureX-Past
def valid_futurex(rng: random.Random, i: int) -> dict[str, Any]:
    seven = valid_seven(rng, i)
    return {
        "id": f"{i:024x}",
        "prompt": render_prompt(seven["event"], seven["options"], seven["end_time"], seven["question_type"]),
        "ground_truth": ground_truth_literal(seven["question_type"], seven["options"], seven["answer"]),
        "end_time": seven["end_time"],
        "level": seven["level"],
        "title": seven["event"],
    }


def _hostile_prompt(rng: random.Random, record: dict[str, Any]) -> Any:
    prompt = record["prompt"]
    lines = prompt.split("\n")
    swapped = list(lines)
    if len(lines) > 4:
        swapped[1], swapped[2] = swapped[2], swapped[1]
    many = render_prompt("Which of many?", [f"o{j}" for j in range(rng.choice((1, 26, 64, 65, 90)))], record["end_time"], "multiple_choice")
    return rng.choice(
        (
            prompt.replace("\n", "\r\n"),
            prompt.replace(".  the outcome be", ".\tthe outcome be"),
            prompt.replace("\n", "  \n\n"),
            prompt.replace(" ", "\u00a0"),
            prompt.replace("the outcome be ", "the outcome be \u200b"),
            prompt[: rng.randrange(len(prompt))],
            prompt.replace('"\nIMPORTANT', "\nIMPORTANT"),
            prompt.replace(" (resolved around ", " (when? "),
            "\n".join(swapped),
            prompt.replace("\nIMPORTANT", "\nA stray line\nIMPORTANT"),
            prompt.replace("predicted: \"", "predicted: \"\"quoted\" (resolved around soon) "),
            prompt + "\x00",
            prompt.replace("Will", "Will" + LONE_SURROGATE, 1),
            many,
            "",
            _wrong_type(rng),
        )
    )


def _hostile_ground_truth(rng: random.Random, record: dict[str, Any]) -> Any:
    return rng.choice(
        ("['A']", "['A', 'C']", "[]", "", "['Z']", "['a']", "A", "['Yes']", "['yes']", "['Maybe']", '["A"]', "['A', 'A']", "['A',, 'B']", "['\u200bA']", "['A'", ["A"], 1, None, deep_json(30))
    )


def futurex_records(seed: int = SEED, n: int = N_ROWS) -> list[dict[str, Any]]:
    """``n`` records in FutureX-Past's raw layout, about half hostile."""
    rng = random.Random(seed + 1)
    mutations = {**{k: SEVEN_MUTATIONS[k] for k in ("id", "end_time", "level")}, "prompt": _hostile_prompt, "ground_truth": _hostile_ground_truth}
    return _hostile_rows(rng, n, valid_futurex, mutations, "ground_truth")


# ------------------------------------------------------------------------------ typed tables
def _unicode(text: str) -> str:
    """``text`` with lone surrogates replaced (UTF-8, so Arrow and parquet, cannot hold them)."""
    return text.encode("utf-8", "replace").decode("utf-8") if any("\ud800" <= c <= "\udfff" for c in text) else text


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return None if value is None else _unicode(value)
    return _unicode(json.dumps(value, ensure_ascii=False))


def tabular(record: dict[str, Any], list_fields: tuple[str, ...] = ("options",), int_fields: tuple[str, ...] = ("level",)) -> dict[str, Any]:
    """``record`` as one typed row can hold it: text fields hold text (any other value as
    its JSON text, as a spreadsheet export would show it), list fields a list of text or
    null, integer fields an int64 or null. Every record maps to the same columns."""
    row: dict[str, Any] = {}
    for name, value in record.items():
        if name in list_fields:
            row[name] = [_as_text(v) for v in value] if isinstance(value, list) and all(isinstance(v, (str, type(None))) for v in value) else None
        elif name in int_fields:
            ok = isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
            row[name] = value if ok else None
        else:
            row[name] = _as_text(value)
    return row


def tabular_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = list(dict.fromkeys(key for record in records for key in record))
    return [tabular({name: record.get(name) for name in names}) for record in records]


def has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(has_lone_surrogate(v) for v in value.values())
    return False


def is_finite_json(value: Any) -> bool:
    return not (isinstance(value, float) and not math.isfinite(value))


# ------------------------------------------------------------------------------ ForecastBench
_FB_SOURCES = ("manifold", "metaculus", "polymarket", "acled", "fred", "wikipedia", "infer")


def _fb_question(rng: random.Random, i: int) -> Any:
    question: dict[str, Any] = {
        "id": f"q{i:05d}",
        "source": rng.choice(_FB_SOURCES),
        "question": f"Will the {_word(rng)} #{i} rise by {{resolution_date}} from {{forecast_due_date}}?",
        "background": f"Background of {i}.",
        "resolution_criteria": "Resolves by the market.",
        "freeze_datetime_value": str(rng.random()),
    }
    if rng.random() < 0.3:
        key = rng.choice(("id", "source", "question", "background", "freeze_datetime_value"))
        question[key] = rng.choice(
            (_wrong_type(rng), "", "x" * HUGE if rng.random() < 0.01 else "long " * 50, "bad" + LONE_SURROGATE, "nul\x00", "inf", "nan", "1e309", _text_variant(rng, "text"))
        )
    return question if rng.random() > 0.01 else rng.choice((None, "not an object", [1, 2], 7))


def _fb_resolution(rng: random.Random, questions: list[Any], due: dt.date) -> Any:
    question = rng.choice(questions)
    question = question if isinstance(question, dict) else {}
    resolution: dict[str, Any] = {
        "id": question.get("id"),
        "source": question.get("source"),
        "direction": None,
        "resolution_date": (due + dt.timedelta(days=rng.choice((7, 30, 90, 180)))).isoformat(),
        "resolved_to": rng.choice((0, 1, 0.0, 1.0)),
        "resolved": True,
    }
    roll = rng.random()
    if roll < 0.05:
        resolution["id"], resolution["direction"] = [question.get("id"), "q00001"], [1, -1]
    elif roll < 0.40:
        key = rng.choice(("id", "source", "resolution_date", "resolved_to", "resolved", "direction"))
        resolution[key] = rng.choice(
            (_wrong_type(rng), "", "1", 0.5, 2, True, "2024-02-30", *YEAR_ZERO, "later" + LONE_SURROGATE, _hostile_end_time(rng, {}), {"source": "manifold"}, ["manifold"])
        )
    elif roll < 0.42:
        return rng.choice((None, "not an object", [resolution], 3.5))
    return resolution


def forecastbench_sets(seed: int = SEED, n: int = N_ROWS) -> tuple[dict[str, Any], dict[str, Any]]:
    """(question set, resolution set) in ForecastBench's layout: ``n`` resolution entries
    over ``n // 10`` questions, about a third of each hostile, some questions repeated."""
    rng = random.Random(seed + 2)
    due = dt.date(2025, 10, 26)
    questions = [_fb_question(rng, i) for i in range(max(n // 10, 2))]
    questions += [rng.choice(questions) for _ in range(len(questions) // 50)]
    resolutions = [_fb_resolution(rng, questions, due) for _ in range(n)]
    name = f"{due.isoformat()}-llm.json"
    return (
        {"forecast_due_date": due.isoformat(), "question_set": name, "questions": questions},
        {"forecast_due_date": due.isoformat(), "question_set": name, "resolutions": resolutions},
    )
