"""verify, count, render_svg, read_solution, adapters, read_results."""

from __future__ import annotations

import json

import numpy as np
import pytest

import concur
from conftest import ROOT


def test_verify_names_what_is_wrong(p4):
    good = p4.planted
    v = concur.verify(p4, good)
    assert v == {"valid": True, "score": p4.max_score, "max_score": p4.max_score, "problems": [],
                 "viewer_link": p4.viewer_link(good)}
    turned = good.copy()
    turned[5, 1] = (turned[5, 1] + 1) % 4
    v = concur.verify(p4, turned)
    assert not v["valid"] and v["score"] < p4.max_score and v["problems"]
    twice = good.copy()
    twice[1] = twice[2]
    assert not concur.verify(p4, twice)["valid"]
    out_of_range = good.copy()
    out_of_range[0, 0] = 99
    v = concur.verify(p4, out_of_range)
    assert not v["valid"] and v["viewer_link"] is None
    assert not concur.verify(p4, good[:10])["valid"]


def test_count_by_both_engines_agrees():
    p = concur.Puzzle.generate(4, 4, seed=3, frame_colors=3, inner_colors=4, unique=True, unique_attempts=50)
    scan = concur.count(p)
    ac = concur.count(p, "ac")
    assert scan["complete"] and ac["complete"]
    assert scan["solutions"] == ac["solutions"] >= 4
    assert scan["up_to_rotation"] == ac["up_to_rotation"] == 1
    assert scan["nodes"] > 0 and ac["nodes"] > 0 and scan["interrupted"] is False
    limited = concur.count(p, "ac", limit=1)
    assert limited["solutions"] == 1 and not limited["complete"]
    with pytest.raises(concur.SpecError):
        concur.count(p, "magic")
    with pytest.raises(concur.SpecError):
        concur.count(p, "ac", threads=2)
    with pytest.raises(concur.SpecError):
        concur.count(p, "ac", time_limit=-1)


def test_render_svg_draws_the_board(p4):
    svg = concur.render_svg(p4, p4.planted)
    assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "red" not in svg  # no mismatched join
    bad = p4.planted.copy()
    bad[0, 0] = 999
    with pytest.raises(concur.InputError):
        concur.render_svg(p4, bad)


def test_read_solution_reads_owens_format_and_viewer_links(p4, tmp_path):
    r = concur.solve(p4, trials=4, seed=1, keep_going=True, max_iters=3_000, backend="cpu")
    s = r.solutions[0]
    f = tmp_path / "s.txt"
    f.write_text(s.text)
    assert np.array_equal(concur.read_solution(p4, f), s.board)
    assert concur.verify(p4, concur.read_solution(p4, s.viewer_link))["valid"]
    f.write_text("4 4\nnot a solution\n")
    with pytest.raises(concur.InputError):
        concur.read_solution(p4, f)
    with pytest.raises(FileNotFoundError):
        concur.read_solution(p4, tmp_path / "none.txt")


def test_adapters_is_a_list_of_dicts():
    found = concur.adapters()
    assert isinstance(found, list)
    for a in found:
        assert set(a) == {"name", "backend", "device_type", "driver"}


def test_read_results_reads_a_ladders_records(tmp_path):
    d = ROOT / "benches" / "results" / "ladder-answer"
    records = concur.read_results(d)
    lines = sum(1 for f in d.glob("*.jsonl") for line in f.read_text().splitlines() if line.strip())
    assert len(records) == lines > 0
    assert {"instance", "method", "solved", "work", "wall_s"} <= set(records[0])
    one = concur.read_results(d / "results.jsonl")
    assert 0 < len(one) <= len(records)
    pandas = pytest.importorskip("pandas")
    frame = concur.read_results(d, frame=True)
    assert isinstance(frame, pandas.DataFrame) and len(frame) == len(records)
    assert set(frame["method"]) == {r["method"] for r in records}
    with pytest.raises(FileNotFoundError):
        concur.read_results(tmp_path / "none")
    (tmp_path / "bad.jsonl").write_text(json.dumps({"instance": 1}) + "\n" + json.dumps({"x": 2}) + "\n")
    with pytest.raises(concur.InputError):
        concur.read_results(tmp_path)


def test_the_exceptions_form_a_hierarchy():
    assert issubclass(concur.InputError, concur.ConcurError) and issubclass(concur.InputError, ValueError)
    assert issubclass(concur.SpecError, concur.ConcurError) and issubclass(concur.SpecError, ValueError)
    assert issubclass(concur.ResourceError, concur.ConcurError)
    assert issubclass(concur.DeviceError, concur.ConcurError)
    assert concur.__version__
