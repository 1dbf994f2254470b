"""Scoring artifacts are the same bytes whichever BLAS kernel the CPU selects."""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oracleproto.scoring.statistics import on_exact_grid
from tests.cli.test_score import write_trials
from tests.scoring.synthetic import random_rows

# Forced BLAS kernels, and numpy's own dispatch with the AVX-512 and AVX2 levels switched off
# (numpy 2.4 names its x86 levels X86_V3 = AVX2 and X86_V4 = AVX-512).
KERNELS = (
    {"OPENBLAS_CORETYPE": "Prescott"},
    {"OPENBLAS_CORETYPE": "Haswell"},
    {"OPENBLAS_CORETYPE": "SkylakeX"},
    {"OPENBLAS_CORETYPE": "Prescott", "NPY_DISABLE_CPU_FEATURES": "AVX512_ICL X86_V4 X86_V3"},
)


def _score_hashes(trials: Path, out: Path, kernel: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, **kernel}
    cmd = [sys.executable, "-m", "oracleproto", "score", "--trials", str(trials), "--out", str(out), "--bootstrap", "300"]
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_score_bytes_do_not_depend_on_the_blas_kernel(tmp_path):
    trials = write_trials(tmp_path / "trials.parquet", random_rows(3, n_models=6, n_questions=200, beliefs=True))
    hashes = [_score_hashes(trials, tmp_path / str(i), kernel) for i, kernel in enumerate(KERNELS)]
    assert hashes[0] and all(h == hashes[0] for h in hashes[1:])


def test_exact_grid_makes_every_summation_order_agree():
    rng = np.random.default_rng(3)
    values = on_exact_grid(rng.normal(size=(400, 3)) / 7, max_weight_total=400)
    weights = rng.integers(0, 4, size=400).astype(np.float64)
    weights *= 400 / weights.sum() * 0.99  # keep the total within the bound
    weights = np.floor(weights)
    forward = sum(w * v for w, v in zip(weights, values))
    backward = sum(w * v for w, v in zip(weights[::-1], values[::-1]))
    shuffled = rng.permutation(400)
    assert np.array_equal(forward, backward)
    assert np.array_equal(forward, sum(weights[i] * values[i] for i in shuffled))
    assert np.array_equal(forward, weights @ values)


def test_exact_grid_moves_values_by_less_than_1e_10_and_keeps_integers():
    values = np.array([[1 / 3, 7.0], [2 / 3, 3.0]])
    grid = on_exact_grid(values, max_weight_total=10_000)
    assert np.abs(grid - values).max() < 1e-10
    assert np.array_equal(grid[:, 1], values[:, 1])
