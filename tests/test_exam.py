import numpy as np
import pyarrow as pa
import pytest

from oracleproto.exam import (
    exam_score,
    exam_scores,
    hamming_from_masks,
    tversky_from_masks,
)
from oracleproto.lettersets import letter_set_masks, lowest_letter, masks_from_indices


@pytest.mark.parametrize(
    ("pred", "answer", "expected"),
    [
        ("A", "A", 1.0),
        ("B", "A", 0.0),
        (None, "A", 0.0),  # parse failure
        ("A", "A, C", 0.5),  # recall credit
        ("A, C", "A, C", 1.0),
        ("A, B", "A, C", 0.0),  # any false positive zeroes the trial
        ("C, A", "A, C", 1.0),  # order does not matter
        ("A, B, C", "A, B, C, D", 0.75),
        ("A, C", "A", 0.0),  # two letters on a single-answer question
        ("", "A", 0.0),
    ],
)
def test_exam_score_follows_eq18(pred, answer, expected):
    assert exam_score(pred, answer) == expected


def test_exam_score_rejects_bad_gold():
    with pytest.raises(ValueError, match="not a letter set"):
        exam_score("A", "")


def test_exam_scores_vectorised_equals_scalar():
    preds = ["A", None, "A, B", "B, D", "Z", "A, C"]
    answers = ["A", "B", "A, B, C", "B, D", "A", "C"]
    expected = [exam_score(p, a) for p, a in zip(preds, answers)]
    assert exam_scores(preds, answers).tolist() == expected
    assert exam_scores(pa.array(preds), pa.chunked_array([answers])).tolist() == expected


def test_masks_cover_letters_beyond_z():
    masks, present, valid = letter_set_masks(["A, [", None, "AB", "\\"])
    assert masks.tolist()[0] == (1 << 0) | (1 << 26)
    assert present.tolist() == [True, False, True, True]
    assert valid.tolist() == [True, False, False, True]
    assert lowest_letter(masks).tolist() == [0, -1, -1, 27]


def test_tversky_and_hamming_by_hand():
    pred = masks_from_indices([{0}, {0, 1}, {2}, {0, 2}])
    gold = masks_from_indices([{0}, {0}, {0}, {0, 1, 2}])
    # {0,1} vs {0}: 1/(1+2·1) ; {0,2} vs {0,1,2}: 2/(2+0.5·1)
    assert tversky_from_masks(pred, gold).tolist() == pytest.approx([1.0, 1 / 3, 0.0, 0.8])
    assert hamming_from_masks(pred, gold, np.array([4, 4, 4, 5])).tolist() == pytest.approx([1.0, 0.75, 0.5, 0.8])


def test_package_exposes_the_api_lazily():
    import subprocess
    import sys

    code = "import sys; from oracleproto.exam import exam_score; print('pandera' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"  # the reward path stays light
    import oracleproto.scoring as metrics

    assert metrics.METRICS["fss"].higher_is_better is True
    assert callable(metrics.score_table) and callable(metrics.leaderboard_markdown)
    with pytest.raises(AttributeError):
        metrics.no_such_thing
