"""Detector layers scored on a labelled set: the heuristic by hand on tiny pairs, the LLM layer
through record/replay against a loopback detector."""

import json

import pytest
from typer.testing import CliRunner

from oracleproto.cli import app
from oracleproto.io import json_text
from oracleproto.leakaudit.bench import bench, confusion, load_pairs
from oracleproto.leakaudit.sample import LeakAuditError
from tests.leakaudit.test_audit_set import SET_PATH
from tests.servers.openai_server import OpenAIServer, content_reply

runner = CliRunner()


def pair(pair_id, label, published, content, chi="2025-03-01", kind="k", difficulty="easy", title="A page"):
    return {"pair_id": pair_id, "kind": kind, "difficulty": difficulty, "chi": chi, "label": label, "title": title,
            "url": f"https://n.example/{pair_id}", "published_date": published, "content": content}  # fmt: skip


TINY = [
    pair("p1", "leak", "2025-03-05", "The vote passed."),  # dated after χ: dropped
    pair("p2", "leak", "2025-02-20", "Update: the vote passed.", difficulty="hard"),  # no date: kept (missed)
    pair("p3", "clean", "2025-02-20", "The vote is expected soon."),  # kept
    pair("p4", "clean", None, "Background on the vote.", difficulty="hard"),  # undated: dropped (false alarm)
    pair("p5", "leak", "2025-02-20", "It passed on 4 March 2025."),  # date in text: dropped
]


def write_set(path, pairs):
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return path


def test_heuristic_layer_by_hand(tmp_path):
    result = bench(write_set(tmp_path / "tiny.jsonl", TINY), "heuristic")
    overall = result["overall"]
    assert overall["counts"] == {"leak_dropped": 2, "clean_dropped": 1, "leak_kept": 1, "clean_kept": 1}
    assert overall["precision"]["rate"] == pytest.approx(2 / 3) and overall["recall"]["rate"] == pytest.approx(2 / 3)
    assert overall["residual_leak_rate"]["rate"] == pytest.approx(1 / 2) and overall["pass_through"]["rate"] == pytest.approx(1 / 3)
    assert result["by_difficulty"]["hard"]["counts"] == {"leak_dropped": 0, "clean_dropped": 1, "leak_kept": 1, "clean_kept": 0}
    kept_undated = bench(write_set(tmp_path / "tiny.jsonl", TINY), "heuristic", undated="keep")["overall"]["counts"]
    assert kept_undated["clean_dropped"] == 0 and kept_undated["clean_kept"] == 2


def test_confusion_rates_are_wilson_proportions():
    stats = confusion([True, True, False, False], [True, False, False, False])
    assert stats["precision"] == {"successes": 1, "n": 1, "rate": 1.0, "ci_low": stats["precision"]["ci_low"], "ci_high": 1.0}
    assert stats["residual_leak_rate"]["n"] == 3 and stats["n"] == 4


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"label": "maybe"}, "label 'maybe' is not leak or clean"),
        ({"chi": "soon"}, "chi 'soon' is not an ISO date"),
        ({"pair_id": "p1"}, "pair_id 'p1' repeats"),
    ],
)
def test_bad_sets_are_errors_naming_the_line(tmp_path, bad, message):
    with pytest.raises(LeakAuditError, match=f"line 2: {message}"):
        load_pairs(write_set(tmp_path / "bad.jsonl", [TINY[0], {**TINY[1], **bad}]))


def test_missing_fields_and_empty_sets(tmp_path):
    with pytest.raises(LeakAuditError, match=r"line 1: missing field\(s\) \['content'\]"):
        load_pairs(write_set(tmp_path / "bad.jsonl", [{k: v for k, v in TINY[0].items() if k != "content"}]))
    with pytest.raises(LeakAuditError, match="has no pairs"):
        load_pairs(write_set(tmp_path / "empty.jsonl", []))


def outcome_judge(body):
    """A loopback detector that drops pages reporting an outcome or an update, keeps the rest."""
    text = body["messages"][0]["content"].split("Document:", 1)[1]
    drop = any(word in text for word in (" won ", " beat ", "Update", "away."))
    return content_reply(json.dumps({"verdict": "drop" if drop else "keep", "reason": "loopback"}), body)


def test_llm_layer_is_recorded_then_replayed_offline(tmp_path):
    subset = write_set(tmp_path / "subset.jsonl", [json.loads(line) for line in SET_PATH.read_text(encoding="utf-8").splitlines()[:60]])
    cache = tmp_path / "calls.sqlite"
    with OpenAIServer(outcome_judge) as server:
        env = {"DETECTOR_BASE_URL": server.base_url, "DETECTOR_API_KEY": "sk-bench-detector-0123456789", "DETECTOR_MODEL": "det/m"}
        recorded = bench(subset, "llm", cache_path=cache, environ=env)
        bodies = [r.raw.decode() for r in server.requests]
    assert len(bodies) == 60 and not any('"label"' in b or "latest_event" in b or "outcome_in_title_only" in b for b in bodies)
    assert recorded["overall"]["n"] == 60 and recorded["failed_verdicts"] == 0
    replayed = runner.invoke(
        app, ["leak-audit", "bench", "--set", str(subset), "--detector", "llm", "--cache", str(cache), "--cache-mode", "replay",
              "--detector-model", "det/m", "--out", str(tmp_path / "out")],
        env={"DETECTOR_BASE_URL": "", "DETECTOR_API_KEY": "", "OPENAI_BASE_URL": "", "OPENAI_API_KEY": "", "DETECTOR_MODEL": ""},
    )  # fmt: skip
    assert replayed.exit_code == 0, replayed.output
    assert (tmp_path / "out" / "bench.json").read_text() == json_text(recorded)
    assert "precision" in replayed.output and "residual leak rate" in replayed.output
    assert b"sk-bench-detector" not in cache.read_bytes()


def test_a_replay_missing_a_call_is_one_error_line(tmp_path):
    subset = write_set(tmp_path / "tiny.jsonl", TINY)
    with OpenAIServer(outcome_judge) as server:
        env = {"DETECTOR_BASE_URL": server.base_url, "DETECTOR_API_KEY": "sk-bench-detector-0123456789", "DETECTOR_MODEL": "det/m"}
        bench(write_set(tmp_path / "two.jsonl", TINY[:2]), "llm", cache_path=tmp_path / "c.sqlite", environ=env)
    done = runner.invoke(app, ["leak-audit", "bench", "--set", str(subset), "--detector", "heuristic+llm", "--cache", str(tmp_path / "c.sqlite"),
                               "--cache-mode", "replay", "--detector-model", "det/m"])  # fmt: skip
    assert done.exit_code == 1 and done.output.startswith("error: replay miss")
