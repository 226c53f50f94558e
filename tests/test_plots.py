"""``bigtwo ladder --plot`` and ``bigtwo tournament --plot``: the pictures show the numbers of the report."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from bigtwo.arena import run_tournament
from bigtwo.arena.ladder import run_ladder
from bigtwo.arena.plots import ladder_figure, save_figure, tournament_figure
from bigtwo.arena.stats import Z95
from bigtwo.cli import main

PNG = b"\x89PNG\r\n\x1a\n"


def _points(ax) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The y labels top to bottom (none on an axes that shares its neighbour's), the points' x, and
    each error bar's (low, high)."""
    bars = ax.containers[0]
    xs = np.asarray(bars.lines[0].get_xdata(), dtype=float)
    spans = np.array([[seg[0][0], seg[1][0]] for seg in bars.lines[2][0].get_segments()])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    ticks = sorted(zip(ax.get_yticks(), labels, strict=True)) if labels else []
    top_down = [name for _, name in ticks]  # the y axis is inverted: the first row is drawn at the top
    return top_down, xs, spans


def test_the_tournament_picture_shows_each_payoff_and_margin_with_its_interval():
    result = run_tournament(
        "taiwan", ["heuristic", "greedy", "random", "random"], deals=12, seed=3, workers=1, progress=False
    )
    fig = tournament_figure(result)
    pay, margin = fig.axes
    assert pay.yaxis_inverted()
    order = sorted(result.stats, key=lambda s: -s.mean_payoff)
    names, xs, spans = _points(pay)
    assert names == [s.name for s in order]
    np.testing.assert_allclose(xs, [s.mean_payoff for s in order])
    np.testing.assert_allclose(spans, [s.ci95 for s in order])
    _, mxs, mspans = _points(margin)
    np.testing.assert_allclose(mxs, [s.margin for s in order])
    np.testing.assert_allclose(mspans, [s.margin_ci95 for s in order])


def test_the_ladder_picture_shows_each_rating_best_first(tmp_path):
    ladder = run_ladder("taiwan", deals=8, seed=1, simulations=4, progress=False, workers=1)
    fig = ladder_figure(ladder)
    (ax,) = fig.axes
    ranked = ladder.ranked()
    names, xs, spans = _points(ax)
    assert names == [s.name for s in ranked]
    np.testing.assert_allclose(xs, [s.rating for s in ranked])
    np.testing.assert_allclose(spans[:, 1] - spans[:, 0], [2 * Z95 * s.rating_se for s in ranked])
    path = save_figure(fig, tmp_path / "sub" / "ladder.png")
    assert path.read_bytes().startswith(PNG)


def test_plot_commands_write_the_file_and_refuse_a_bad_name_before_playing(tmp_path, capsys):
    out = tmp_path / "payoffs.svg"
    code = main(
        ["tournament", "--agents", "greedy,random", "--players", "2", "--deals", "3", "--workers", "1"]
        + ["--quiet", "--plot", str(out)]
    )
    assert code == 0 and out.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    capsys.readouterr()
    for command in (["tournament", "--agents", "greedy,random,random,random"], ["ladder"]):
        assert main([*command, "--deals", "2000", "--quiet", "--plot", str(tmp_path / "table.txt")]) == 2
        err = capsys.readouterr().err
        assert "the file must end in .png, .svg, .pdf" in err and "table.txt" in err
    (tmp_path / "pictures.png").mkdir()
    assert main(["ladder", "--deals", "2", "--quiet", "--plot", str(tmp_path / "pictures.png")]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_without_matplotlib_the_plot_says_what_to_install(monkeypatch):
    result = run_tournament("taiwan", ["greedy", "random"], deals=2, seed=0, workers=1, progress=False, players=2)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ValueError, match=r"pip install 'bigtwo\[notebooks\]'"):
        tournament_figure(result)
