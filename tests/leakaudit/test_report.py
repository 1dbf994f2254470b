"""The report's numbers from label counts, and the sheet checks (no run needed)."""

import csv

import pytest

from oracleproto.leakaudit.layers import LAYERS
from oracleproto.leakaudit.report import (
    build_report,
    layer_counts,
    report_markdown,
    summarise,
)
from oracleproto.leakaudit.sample import SHEET_COLUMNS, LeakAuditError, audit_hash


def counts(leak, clean, unsure=0, unlabelled=0):
    return {"sampled": leak + clean + unsure + unlabelled, "leak": leak, "clean": clean, "unsure": unsure, "unlabelled": unlabelled}


def test_rates_residual_precision_and_recall_from_counts():
    report = summarise(
        {
            "dropped_by_date_filter": counts(30, 10),
            "dropped_by_heuristic": counts(8, 2),
            "dropped_by_detector": counts(18, 2, unsure=1),
            "shown_to_model": counts(2, 38, unlabelled=4),
        },
        {"dropped_by_date_filter": 400, "dropped_by_heuristic": 20, "dropped_by_detector": 40, "shown_to_model": 900},
    )
    shown = report["layers"]["shown_to_model"]
    assert (shown["labelled"], shown["unlabelled"], shown["population"]) == (40, 4, 900)
    assert report["residual_leak_rate"] == shown["leak_rate"] and report["residual_leak_rate"]["rate"] == pytest.approx(0.05)
    assert report["layers"]["dropped_by_detector"]["unsure"] == 1 and report["layers"]["dropped_by_detector"]["labelled"] == 20
    detector = report["filters"]["detector"]
    assert detector["precision"]["rate"] == pytest.approx(0.9)
    # leaks reaching the detector: 40·0.9 = 36 dropped, 900·0.05 = 45 shown
    assert detector["recall"]["estimate"] == pytest.approx(36 / 81)
    assert report["filters"]["date_filter"]["recall"]["estimate"] == pytest.approx(300 / (300 + 16 + 36 + 45))
    assert report["leak_pass_through"]["estimate"] == pytest.approx(45 / (300 + 16 + 36 + 45))


def test_a_filter_whose_kept_side_was_not_sampled_has_no_recall():
    report = summarise(
        {layer: counts(0, 0) if layer == "shown_to_model" else counts(3, 1) for layer in LAYERS},
        dict.fromkeys(LAYERS, 10),
    )
    assert report["filters"]["detector"]["recall"]["undefined_because"] == "no labelled sample in shown_to_model"
    assert report["residual_leak_rate"]["rate"] is None
    assert "–" in report_markdown({**report, "sheet": {"run_sha256": "a" * 64, "seed": 0, "per_layer": 5, "audit_hash": "b" * 64}})


def write_sheet(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, SHEET_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def sheet_rows(labels):
    ids = [(f"id{i}", "shown_to_model") for i in range(len(labels))]
    binding = audit_hash("r" * 64, 0, 5, {"shown_to_model": 9}, ids)
    base = dict.fromkeys(SHEET_COLUMNS, "")
    return [
        {**base, "sample_id": sid, "layer": layer, "label": label, "layer_population": 9, "run_sha256": "r" * 64, "seed": 0, "per_layer": 5, "audit_hash": binding}
        for (sid, layer), label in zip(ids, labels, strict=True)
    ]


def test_labels_are_read_case_insensitively_and_blank_means_unlabelled(tmp_path):
    report = build_report(write_sheet(tmp_path / "s.csv", sheet_rows(["Leak", " clean ", "", "unsure", "CLEAN"])))
    shown = report["layers"]["shown_to_model"]
    assert (shown["leak"], shown["clean"], shown["unsure"], shown["unlabelled"], shown["population"]) == (1, 2, 1, 1, 9)
    assert report["sheet"]["seed"] == 0 and report["checked_against_run"] is False


def test_a_label_outside_the_vocabulary_is_an_error_naming_the_sample(tmp_path):
    with pytest.raises(LeakAuditError, match="sample id1: label 'maybe' is not one of"):
        build_report(write_sheet(tmp_path / "s.csv", sheet_rows(["leak", "maybe"])))


def test_a_row_moved_to_another_layer_breaks_the_hash(tmp_path):
    rows = sheet_rows(["leak", "clean"])
    rows[0]["layer"] = "dropped_by_detector"
    with pytest.raises(LeakAuditError, match="rows were added, removed or changed layer"):
        build_report(write_sheet(tmp_path / "s.csv", rows))


def test_not_a_sheet(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(LeakAuditError, match="not a leak-audit sheet, missing column"):
        build_report(path)
    with pytest.raises(LeakAuditError, match="has no rows"):
        build_report(write_sheet(tmp_path / "empty.csv", []))
    assert layer_counts([], path) == {layer: counts(0, 0) for layer in LAYERS}
