"""concur.solve: every method, the result's fields, options refused as the command line
refuses them, and the same seed giving the command line's run."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

import concur

# Fields of a map's report that depend on the clock, not on the seed.
TIMED = {"wall_s", "iters_per_s", "nodes_per_s", "moves_per_s", "iterations_per_s", "setup_s", "backend"}


def steady(stats: dict) -> dict:
    return {k: v for k, v in stats.items() if k not in TIMED}


def test_help_shows_the_signature_and_its_defaults():
    sig = inspect.signature(concur.solve)
    assert sig.parameters["method"].default == "rrr"
    assert sig.parameters["seed"].default == 0
    assert sig.parameters["backend"].default == "auto"
    assert sig.parameters["trials"].default is None
    assert "options" in sig.parameters
    assert "join_weights" in concur.solve.__doc__
    assert concur.Puzzle.generate.__doc__ and concur.verify.__doc__ and concur.count.__doc__


def test_rrr_solves_a_4x4_and_fills_every_field(p4):
    r = concur.solve(p4, trials=4, seed=1, backend="cpu", threads=1)
    assert r.solved and r.score == r.max_score == p4.max_score
    assert r.method == "rrr" and r.mechanism == "map" and r.work_unit == "iterations"
    assert r.board.shape == (16, 2) and not r.board.flags.writeable
    assert concur.verify(p4, r.board)["valid"] and concur.verify(p4, r)["valid"]
    assert r.viewer_link == p4.viewer_link(r.board)
    assert len(r.trial_iterations) == len(r.trial_solved) == len(r.trial_best_score) == 4
    assert r.trial_solved.dtype == bool and r.trial_solved.any()
    t = r.stats["trial"]
    assert r.trial_solved[t] and r.trial_solved_at[t] == r.stats["iterations"]
    assert r.trial_best_score[t] == p4.max_score
    assert (r.trial_solved_at[~r.trial_solved] == -1).all()
    assert r.trials[t]["solved_at"] == r.stats["iterations"]
    assert r.stats["solved"] and r.stats["method"] == "rrr" and r.stats["viewer_link"] == r.viewer_link
    assert json.loads(r.json) == r.stats
    assert r.solutions is None and "interrupted" not in r.stats
    assert "solved=True" in repr(r)


@pytest.mark.parametrize(
    "method, options",
    [
        ("dm", dict(trials=4, max_iters=20_000)),
        ("dc", dict(trials=4, max_iters=20_000)),
        ("dc", dict(trials=4, max_iters=20_000, layout="plain", weights="adaptive")),
        ("backtrack", dict(time_limit=20)),
        ("scan", dict(threads=1, time_limit=20)),
        ("hill", dict(time_limit=5)),
        ("alns", dict(time_limit=5)),
    ],
)
def test_every_method_runs_and_its_board_verifies(p4, method, options):
    r = concur.solve(p4, method, seed=2, **options)
    assert r.method == method
    if r.solved:
        assert concur.verify(p4, r.board)["valid"]
    if method in ("dm", "dc"):
        assert r.solved and len(r.trial_iterations) == 4
    else:
        assert len(r.trial_iterations) == 0


def test_the_same_seed_gives_the_same_run(p5):
    a = concur.solve(p5, trials=4, seed=3, max_iters=5_000, all_trials=True, backend="cpu")
    b = concur.solve(p5, trials=4, seed=3, max_iters=5_000, all_trials=True, backend="cpu", threads=1)
    assert steady(a.stats) == steady(b.stats)
    assert np.array_equal(a.trial_iterations, b.trial_iterations)
    assert np.array_equal(a.board, b.board)


def test_options_are_refused_with_the_command_lines_reasons(p4):
    cases = [
        (dict(layout="plain"), "--layout is an option of --method dc, not of rrr", "layout"),
        (dict(nonsense=1), "--nonsense is not an option of any method", "nonsense"),
        (dict(beta=3.0), "--beta must be in (0, 2], got 3", "beta"),
        (dict(trials=0), "--trials must be at least 1, got 0", "trials"),
        (dict(complete_radius=2), "--complete-radius has no effect without --complete", "complete_radius"),
        (dict(beta="big"), None, "beta"),
        (dict(join_weights=[1, 0, 4]), None, "join_weights"),
        (dict(beta=float("nan")), None, "beta"),
    ]
    for options, message, key in cases:
        with pytest.raises(concur.SpecError) as e:
            concur.solve(p4, **options)
        if message is not None:
            assert str(e.value) == message
        assert e.value.key == key
        assert isinstance(e.value, ValueError) and isinstance(e.value, concur.ConcurError)
    with pytest.raises(concur.SpecError, match="--trials is an option of --method rrr, dm, dc, not of scan"):
        concur.solve(p4, "scan", trials=4)
    with pytest.raises(concur.SpecError):
        concur.solve(p4, "simulated-annealing")
    with pytest.raises(concur.SpecError):
        concur.solve(p4, time_limit=-1)
    with pytest.raises(concur.SpecError, match="dump-state"):
        concur.solve(p4, keep_going=True, certify="solved")
    with pytest.raises(concur.SpecError):
        concur.solve(p4, certify="sometimes")
    with pytest.raises(TypeError):
        concur.solve(p4, progress=3)
    with pytest.raises(TypeError):
        concur.solve("p.txt")


def test_options_take_python_values(p4):
    r = concur.solve(p4, trials=2, seed=1, join_weights=(1, 2, 4), max_iters=np.int64(2_000), beta=np.float32(0.5),
                     backend="cpu", all_trials=True)
    assert r.stats["join_weights"] == [1.0, 2.0, 4.0] and r.stats["beta"] == 0.5
    # None leaves an option at its default.
    d = concur.solve(p4, trials=2, seed=1, complete=None, backend="cpu", max_iters=500, all_trials=True)
    assert d.stats["completions"] == 0


def test_rate_mode_through_solve_records_every_solution(p4):
    r = concur.solve(p4, trials=4, seed=1, keep_going=True, max_iters=6_000, backend="cpu")
    assert r.solutions and len(r.solutions) == r.stats["solutions"] == r.trial_solutions.sum()
    for s in r.solutions:
        assert concur.verify(p4, s.board)["valid"]
        assert 0 < s.iterations <= s.trial_iteration <= 6_000
        assert s.text.startswith("4 4")
    assert r.distinct_solutions == r.stats["distinct_solutions"]


def test_progress_is_called_with_a_dict_and_its_exception_ends_the_run():
    p = concur.Puzzle.generate(7, 7, seed=4)
    heard = []
    r = concur.solve(p, trials=2, threads=1, time_limit=1.0, backend="cpu", progress=heard.append)
    assert 2 <= len(heard) <= 8, len(heard)
    assert heard[0]["kind"] == "map" and heard[-1]["max_score"] == p.max_score
    assert all(h["trials"] == 2 for h in heard)
    assert r.wall_s >= 0.9 or r.solved

    class Stop(Exception):
        pass

    def stop(_):
        raise Stop("enough")

    with pytest.raises(Stop):
        concur.solve(p, trials=2, threads=1, time_limit=30, backend="cpu", progress=stop)
    # The scan reports twice a second: an 8x8 it cannot solve in its time, so that it does
    # (the 7x7 above takes it under half a second on a fast core).
    scan = []
    r = concur.solve(concur.Puzzle.generate(8, 8, seed=4), "scan", threads=1, time_limit=1.5, progress=scan.append)
    assert not r.solved and scan and scan[0]["kind"] == "scan"


def test_certificates_are_the_command_lines(p4):
    r = concur.solve(p4, trials=3, seed=4, max_iters=640, all_trials=True, backend="cpu", certify="all")
    assert [c["trial"] for c in r.certificates] == [0, 1, 2]
    for c in r.certificates:
        assert c["format"] == "concur-certificate-1" and len(c["x"]) == len(c["pa_fb"]) == len(c["pb_fa"])
        if c["mechanism"] == "map":
            assert c["gap"] <= 1e-3 or c["score"] == c["max_score"]


def test_the_json_is_the_command_lines_for_the_same_seed(p5, cli, tmp_path):
    f = tmp_path / "p.txt"
    p5.write(f)
    for method, args in [("rrr", ["--trials", "4"]), ("dc", ["--trials", "4", "--layout", "plain"]),
                         ("backtrack", []), ("hill", ["--max-iters", "20000"])]:
        out = cli("solve", str(f), "--method", method, "--seed", "5", "--json", "--backend", "cpu", *args)
        theirs = json.loads(out.stdout)
        options = dict(trials=4) if "--trials" in args else {}
        if method == "dc":
            options["layout"] = "plain"
        if method == "hill":
            options["max_iters"] = 20_000
        mine = concur.solve(p5, method, seed=5, backend="cpu", **options).stats
        assert list(mine) == list(theirs), method
        assert steady(mine) == steady(theirs), method
