"""Build data/leak_audit/audit_set.jsonl: (document, χ) pairs labelled leak or clean by rule.

Every pair is about one question of the sample corpus (data/sample/make_sample.py: real
events, each with a public source and a dated resolution note) and uses only the facts of
that question and of the archive texts written for it (data/sample/make_archive.py).

The rule (README.md): a document leaks for the prediction cutoff χ iff it states or implies
an outcome or event after χ: observed, scheduled or speculated. Each document here is built
with ``latest_event``, the latest day of anything it states or implies (an outcome, a
scheduled date, the day a speculation was written, an update), so its label for any χ is
``leak`` iff ``latest_event > χ``; the builder asserts that for every pair.

Run from the repository root after make_sample.py and make_archive.py:
    PYTHONPATH=. python data/leak_audit/make_audit_set.py
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT_PATH = Path(__file__).with_name("audit_set.jsonl")
LATE_DAYS = 30  # χ well after the outcome: the "historical" pairs
REPUBLISHED_DAYS = 5  # a background page re-dated after the outcome
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
# Consecutive editions of the same event in the sample: (earlier slug, later slug, how the
# later page refers back). The later page states the earlier outcome with a relative date.
EDITIONS = (
    ("sb-lvii", "sb-lix", "two years ago"), ("sb-lix", "sb-lx", "last year"),
    ("oscars-bp-2023", "oscars-bp-2024", "last year"), ("oscars-bp-2024", "oscars-2plus-2025", "last year"),
    ("oscars-2plus-2025", "oscars-bp-2026", "last year"), ("eurovision-2023", "eurovision-2024", "last year"),
    ("eurovision-2024", "eurovision-2025", "last year"), ("ballon-2023", "ballon-2024", "last year"),
    ("ballon-2024", "ballon-2025", "last year"),
    ("grammy-aoty-2024", "grammy-aoty-2025", "last year"), ("nba-2023", "nba-2025", "two years ago"),
    ("f1-top3-2024", "f1-2025", "last year"), ("fed-2025-01", "fed-2026-01", "a year ago"),
)  # fmt: skip
SPECULATION_EVERY = 2  # the event-day speculation pairs: every other question

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = rf"\d{{1,2}}(?:-\d{{1,2}})? (?:{_MONTHS}) \d{{4}}"
# Resolution notes with their calendar date taken out (order matters).
_UNDATING = (
    (re.compile(rf", {_DATE},"), ","),
    (re.compile(rf", announced (?:on )?{_DATE},"), ""),
    (re.compile(rf"^On {_DATE},? "), ""),
    (re.compile(rf" (?:on|of) (?:the (?:morning|evening) of )?{_DATE}"), ""),
    (re.compile(rf"the {_DATE} (vote)"), r"the \1"),
    (re.compile(r" \((?:UTC|Eastern Time)\)"), ""),
)
_CALENDAR_DATE = re.compile(rf"\d{{1,2}} (?:{_MONTHS}|Oct)\b|(?:{_MONTHS}) \d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}")

# kind -> (difficulty, what the pair exercises). Labels follow from latest_event and χ.
KINDS = {
    "archive_background": ("easy", "archive background page, dated well before χ"),
    "archive_preview": ("easy", "archive preview (polls, favourites), dated before χ"),
    "archive_result": ("easy", "archive report of the outcome, dated τ"),
    "archive_recap": ("easy", "archive look-back at the outcome, dated τ + 10 days"),
    "archive_stale": ("hard", "dated before χ, updated after publication with the outcome and a dated update line"),
    "archive_undated_background": ("hard", "undated page, context only"),
    "archive_undated_outcome": ("hard", "undated page stating the outcome"),
    "historical_result": ("easy", "outcome report against a χ 30 days after the outcome"),
    "historical_recap": ("easy", "look-back against a χ 30 days after the outcome"),
    "outcome_in_title_only": ("hard", "the title states the outcome (no date); the body and the published date are pre-χ"),
    "update_without_date": ("hard", "page dated before χ, updated with the outcome, the update undated"),
    "republished_after_cutoff": ("hard", "background page re-published after χ, describing only earlier events"),
    "scheduled_with_date": ("easy", "preview naming the event's scheduled date, which is after χ"),
    "scheduled_relative_date": ("hard", "preview placing the event 'N days away', after χ, with no date"),
    "scheduled_before_cutoff": ("easy", "preview naming a scheduled date that is before χ"),
    "speculation_on_event_day": ("easy", "the outlook as written on the event day, after χ"),
    "earlier_edition_relative_date": ("hard", "later edition's page citing the earlier outcome as 'last year', against its own χ"),
    "later_edition_cites_outcome": ("easy", "later edition's page, dated after χ, stating an earlier edition's outcome"),
    "later_edition_undated": ("hard", "the same page undated, stating an outcome after χ with only a relative date"),
    "earlier_edition_undated": ("hard", "the same undated page against its own χ: the outcome it states is before χ"),
}


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def undated_note(note: str) -> str | None:
    """The resolution note with its calendar date taken out; None if a date would remain."""
    text = note
    for pattern, replacement in _UNDATING:
        text = pattern.sub(replacement, text)
    text = text[0].upper() + text[1:]
    return None if _CALENDAR_DATE.search(text) else text


def long_date(day: dt.date) -> str:
    return f"{day.day} {day:%B %Y}"


def pair(kind: str, question: dict, doc: dict, chi: dt.date, latest_event: dt.date) -> dict:
    difficulty, exercises = KINDS[kind]
    return {
        "pair_id": f"{question['slug']}/{kind}",
        "q_id": question["q_id"],
        "kind": kind,
        "difficulty": difficulty,
        "exercises": exercises,
        "chi": chi.isoformat(),
        "label": "leak" if latest_event > chi else "clean",
        "latest_event": latest_event.isoformat(),
        "title": doc["title"],
        "url": doc["url"],
        "published_date": doc["published_date"],
        "content": doc["content"],
        "source_url": question["source_url"],
    }


class Builder:
    """The sample's questions, the archive's texts and day offsets, and the pairs built from them."""

    def __init__(self) -> None:
        self.sample = _load("make_sample", ROOT / "data" / "sample" / "make_sample.py")
        self.archive = _load("make_archive", ROOT / "data" / "sample" / "make_archive.py")
        ordered = sorted(self.sample.QUESTIONS, key=lambda q: (q["end_time"], self.sample.question_id(q["event"])))
        self.questions = {q["slug"]: {**q, "q_id": self.sample.question_id(q["event"]), "index": i} for i, q in enumerate(ordered)}

    def tau(self, q: dict) -> dt.date:
        return dt.date.fromisoformat(q["end_time"])

    def day(self, q: dict, kind: str) -> dt.date:
        a = self.archive
        back = {"background": a.BACKGROUND_DAYS_OVERRIDE.get(q["slug"], a.BACKGROUND_DAYS), "preview": a.PREVIEW_DAYS_OVERRIDE.get(q["slug"], a.PREVIEW_DAYS)}
        return self.tau(q) - dt.timedelta(days=back[kind])

    def doc(self, q: dict, kind: str, title: str, published: dt.date | None, content: str) -> dict:
        stamp = published.isoformat() if published else None
        return {"title": title, "url": f"{self.archive.URL_ROOT}/{stamp or 'undated'}/{q['slug']}-{kind}", "published_date": stamp, "content": content}

    def archive_pairs(self, q: dict) -> Iterator[dict]:
        """The question's archive documents against its own χ, and the outcome pages against a late χ."""
        tau = self.tau(q)
        chi, late = tau - dt.timedelta(days=1), tau + dt.timedelta(days=LATE_DAYS)
        latest = {"background": self.day(q, "background"), "preview": self.day(q, "preview"), "result": tau, "recap": tau, "stale": tau + dt.timedelta(days=1)}
        for doc in self.archive.question_docs(q, q["q_id"], q["index"]):
            kind = doc["doc_id"].rsplit("-", 1)[1]
            if kind == "undated":
                outcome = q["slug"] in self.archive.UNDATED_OUTCOME_SLUGS
                kind, event_day = ("undated_outcome", tau) if outcome else ("undated_background", latest["preview"])
            else:
                event_day = latest[kind]
            yield pair(f"archive_{kind}", q, doc, chi, event_day)
            if kind in ("result", "recap"):
                yield pair(f"historical_{kind}", q, doc, late, event_day)

    def written_pairs(self, q: dict) -> Iterator[dict]:
        """New pages from the question's facts: outcome without a date, republication, schedules, speculation."""
        tau, (topic, context, outlook) = self.tau(q), self.archive.FACTS[q["slug"]]
        chi, heading = tau - dt.timedelta(days=1), self.archive._heading(topic)
        background, preview = self.day(q, "background"), self.day(q, "preview")
        note = undated_note(q["resolution_note"])
        if note is not None:
            yield pair("outcome_in_title_only", q, self.doc(q, "titled", note, background, f"What to know about {topic}. {context}"), chi, tau)
            yield pair("update_without_date", q, self.doc(q, "updated", f"{heading}: what to know", preview, f"{context} Update: {note}"), chi, tau)
        republished = tau + dt.timedelta(days=REPUBLISHED_DAYS)
        yield pair("republished_after_cutoff", q, self.doc(q, "republished", f"{heading}: background", republished, f"What to know about {topic}. {context}"), chi, background)
        if long_date(tau) in q["event"]:  # the event was scheduled for τ
            scheduled = self.doc(q, "scheduled", f"{heading}: the outlook", preview, f"{outlook} It is scheduled for {long_date(tau)}. {context}")
            yield pair("scheduled_with_date", q, scheduled, chi, tau)
            yield pair("scheduled_before_cutoff", q, scheduled, tau + dt.timedelta(days=LATE_DAYS), tau)
            away = NUMBER_WORDS[(tau - preview).days]
            yield pair("scheduled_relative_date", q, self.doc(q, "countdown", f"{heading}: the outlook", preview, f"{outlook} It is {away} day{'s' * (away != 'one')} away. {context}"), chi, tau)
        if q["index"] % SPECULATION_EVERY == 0:
            yield pair("speculation_on_event_day", q, self.doc(q, "eve", f"{heading}: on the day", tau, f"On the day of {topic}: {outlook}"), chi, tau)

    def edition_pairs(self, earlier: dict, later: dict, phrase: str) -> Iterator[dict]:
        """A later edition's page stating the earlier outcome with a relative date, against both χ."""
        topic, context, _ = self.archive.FACTS[later["slug"]]
        note = undated_note(earlier["resolution_note"])
        if note is None:
            raise ValueError(f"edition pair {earlier['slug']} -> {later['slug']}: the earlier note keeps a date")
        background = self.day(later, "background")
        content = f"What to know about {topic}. {context} A look back at {phrase}: {note}"
        title = f"{self.archive._heading(topic)}: background"
        dated, undated = self.doc(later, "lookback", title, background, content), self.doc(later, "lookback", title, None, content)
        chi_earlier, chi_later = self.tau(earlier) - dt.timedelta(days=1), self.tau(later) - dt.timedelta(days=1)
        yield pair("earlier_edition_relative_date", later, dated, chi_later, background)
        yield pair("earlier_edition_undated", later, undated, chi_later, background)
        # against the earlier question's χ, the page states (among others) that question's outcome
        yield pair("later_edition_cites_outcome", earlier, dated, chi_earlier, background)
        yield pair("later_edition_undated", earlier, undated, chi_earlier, background)

    def pairs(self) -> list[dict]:
        pairs = []
        for q in self.questions.values():
            pairs += [*self.archive_pairs(q), *self.written_pairs(q)]
        for earlier, later, phrase in EDITIONS:
            pairs += self.edition_pairs(self.questions[earlier], self.questions[later], phrase)
        ids = [p["pair_id"] for p in pairs]
        if len(ids) != len(set(ids)):
            raise ValueError("make_audit_set: pair ids repeat")
        for p in pairs:  # the rule, checked on every pair
            assert p["label"] == ("leak" if p["latest_event"] > p["chi"] else "clean"), p["pair_id"]
        return sorted(pairs, key=lambda p: p["pair_id"])


def main() -> None:
    pairs = Builder().pairs()
    text = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs)
    OUT_PATH.write_text(text, encoding="utf-8")
    leaks = sum(p["label"] == "leak" for p in pairs)
    print(f"wrote {len(pairs)} pairs ({leaks} leak, {len(pairs) - leaks} clean) to {OUT_PATH}")


if __name__ == "__main__":
    main()
