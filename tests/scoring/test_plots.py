"""The scoring charts: static SVG, the right kind of chart, the same bytes every time."""

import re

import pytest

from oracleproto.scoring import plots
from oracleproto.scoring.scorer import headline_file_names, write_outputs
from tests.scoring.test_outputs import small_result


def texts(svg: bytes) -> set[str]:
    """matplotlib writes each text (drawn as glyph paths) after a comment holding it."""
    return set(re.findall(r"<!-- (.*?) -->", svg.decode()))


def test_exam_by_bucket_has_a_bar_per_bucket_on_a_labelled_axis():
    svg = plots.exam_by_bucket([("m", "yes_no", 0.5), ("m", "mc", 0.25), ("n", "yes_no", 1.0)])
    assert {"m", "n", "yes_no", "mc", "exam mean"} <= texts(svg)
    assert svg.count(b'id="patch_') >= 3 + 1  # three bars and the axes background


def test_cost_accuracy_places_points_by_cost_and_names_the_frontier():
    svg = plots.cost_accuracy([("cheap", 0.5, 1.0, 0.4, True), ("dear", 3.0, 2.0, 0.6, True), ("bad", 2.0, 9.0, 0.2, False)])
    assert {"cheap", "dear", "bad", "Pareto frontier", "total cost (USD)"} <= texts(svg)
    assert "every model here cost $0 (offline baselines)" not in texts(svg)


def test_zero_cost_runs_say_so_instead_of_a_blank_axis():
    assert "every model here cost $0 (offline baselines)" in texts(plots.cost_accuracy([("a", 0.0, 0.0, 0.5, True)]))


def test_reliability_draws_the_diagonal_and_each_model():
    rows = [("m", 0, 0.0, 0.1, 4, 0.05, 0.0), ("m", 9, 0.9, 1.0, 4, 0.95, 1.0)]
    assert {"perfect calibration", "m", "mean forecast probability"} <= texts(plots.reliability(rows))
    assert "no belief vectors" in " ".join(texts(plots.reliability([])))


def test_significance_colours_by_difference_and_stars_significant_cells():
    rows = [("a", "b", 0.5, 0.01, True), ("b", "a", -0.5, 0.01, True), ("a", "c", 0.1, 0.6, False), ("c", "a", -0.1, 0.6, False)]
    svg = plots.significance(rows)
    assert {"a", "b", "c", "model A", "model B"} <= texts(svg)
    assert sum(1 for t in re.findall(r"<!-- (.*?) -->", svg.decode()) if t == "*") == 2
    assert b"<image" in svg  # the matrix is an image coloured by the difference


@pytest.mark.parametrize("name", sorted(plots.CHARTS))
def test_each_chart_is_byte_identical_when_drawn_twice(tmp_path, name):
    write_outputs(small_result(), tmp_path / "one")
    write_outputs(small_result(), tmp_path / "two")
    first, second = (tmp_path / d / "plots" / name for d in ("one", "two"))
    assert first.read_bytes() == second.read_bytes() and first.read_bytes().startswith(b"<?xml")


def test_headline_metrics_are_one_small_file_per_model(tmp_path):
    import json

    write_outputs(small_result(), tmp_path)
    files = sorted((tmp_path / "headline").glob("*.json"))
    assert [f.name for f in files] == ["m.json", "n.json"]
    values = json.loads(files[0].read_text())
    assert list(values) == sorted(["acc", "p1", "p1_lo", "p1_hi", "valid", "fss", "kappa", "usd_ok", "n"])


def test_headline_file_names_are_short_and_never_collide():
    names = headline_file_names(["baseline:first@cutoff-2024-06-30", "org/model", "first@cutoff-2024-06-30"])
    assert names["org/model"] == "org-model.json"
    assert len(set(names.values())) == 3
    assert headline_file_names(["baseline:no@cutoff-2024-06-30"]) == {"baseline:no@cutoff-2024-06-30": "no@2024-06-30.json"}
