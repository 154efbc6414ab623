"""The README's terminal tour runs on the embedded a9a and saves its plot."""

import numpy as np

from svmlab import datasets
from svmlab.tour import main


def test_tour_runs_on_embedded_data(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SVMLAB_DATA", raising=False)  # the embedded copy only
    monkeypatch.setenv("SVMLAB_OFFLINE", "1")
    datasets.clear_memory_cache()
    try:
        assert main(["--n", "400", "--out", str(tmp_path)]) == 0
    finally:
        datasets.clear_memory_cache()
    out = capsys.readouterr().out
    png = tmp_path / "smo_a9a_decision_values.png"
    assert png.stat().st_size > 10_000
    rows = [ln for ln in out.splitlines() if ln.startswith(("AdultGauss", "AdultLin"))]
    assert len(rows) == 2
    for row in rows:
        iters, secs, n_sv, acc = row.split()[-4:]
        assert int(iters) > 0 and int(n_sv) > 0 and float(secs) >= 0
        # far above the 76% of always predicting the majority class
        assert 0.80 < float(acc) <= 1.0
    assert "32561 rows" in out and np.isfinite(float(rows[1].split()[-1]))
