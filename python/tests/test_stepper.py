"""The steppers: the same iterates as the command line and its certificates for the same seed,
in steps of any size; projections, gap and boards as a certificate holds them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import concur

STEPS = [1, 5, 58, 64, 100, 3, 409]  # 640 in all, across round boundaries


def check_against(stepper, certificates):
    """Steps `stepper` to each certificate's iterate and compares x, gap and board: a solved
    trial's certificate holds the iterate before its solving iteration, any other the iterate
    at its iteration."""
    wanted = []
    for c in certificates:
        at = c["iteration"] - 1 if c["mechanism"] == "map" else c["iteration"]
        wanted.append((at, c))
    compared = 0
    for at, c in sorted(wanted, key=lambda w: w[0]):
        stepper.step(at - stepper.iterations)
        assert stepper.iterations == at
        t = c["trial"]
        x = np.asarray(c["x"], dtype=np.float32)
        assert np.array_equal(stepper.x[t], x), f"trial {t} at {at}: the iterates differ"
        assert stepper.gap[t] == pytest.approx(c["gap"], rel=1e-9, abs=1e-12)
        assert stepper.boards[t].tolist() == c["board"]
        proj = stepper.projections()
        assert np.array_equal(proj["pa_fb"][t], np.asarray(c["pa_fb"], dtype=np.float32))
        assert np.array_equal(proj["pb_fa"][t], np.asarray(c["pb_fa"], dtype=np.float32))
        assert proj["scores"][t] == c["score"]
        mine = stepper.certificate(t)
        if c["mechanism"] is None:
            assert mine == c
        compared += 1
    return compared


@pytest.mark.parametrize("method, options", [("rrr", {}), ("dm", {}), ("rrr", {"join_weights": (1, 1, 1)})])
def test_f1_stepper_matches_the_librarys_certificates(p5, method, options):
    r = concur.solve(p5, method, trials=4, seed=5, max_iters=640, all_trials=True, backend="cpu", threads=1,
                     certify="all", **options)
    s = concur.F1Map(p5, map=method, trials=4, seed=5, **options)
    assert s.x.shape == (4, s.dim) and s.x.dtype == np.float32
    assert check_against(s, r.certificates) == 4
    s.step(640 - s.iterations)
    assert s.solved.tolist() == r.trial_solved.tolist()
    assert s.solved_at.tolist() == r.trial_solved_at.tolist()
    assert s.trial_iterations.tolist() == r.trial_iterations.tolist()
    assert s.best_scores.tolist() == r.trial_best_score.tolist()


@pytest.mark.parametrize("which", ["p4", "p5"])  # every trial solves on p4, none on p5 by 640
@pytest.mark.parametrize("options", [{}, {"layout": "plain"}, {"layout": "plain", "weights": "adaptive"},
                                     {"map": "dm"}])
def test_dc_stepper_matches_the_librarys_certificates(request, which, options):
    p = request.getfixturevalue(which)
    solve_options = {("dc_map" if k == "map" else k): v for k, v in options.items()}
    r = concur.solve(p, "dc", trials=3, seed=6, max_iters=640, all_trials=True, backend="cpu", certify="all",
                     **solve_options)
    s = concur.DcMap(p, trials=3, seed=6, max_iters=640, **options)
    assert check_against(s, r.certificates) == 3
    s.step(640)
    assert s.trial_iterations.tolist() == r.trial_iterations.tolist()
    assert s.weights.shape[0] == 3


def test_steps_of_any_size_give_the_same_iterates_bit_for_bit(p5):
    for make in (lambda: concur.F1Map(p5, trials=3, seed=9, restart_stall=150),
                 lambda: concur.DcMap(p5, trials=3, seed=9),
                 lambda: concur.DcMap(p5, trials=3, seed=9, layout="plain", weights="adaptive", propagate=0.6)):
        a, b = make(), make()
        a.step(640)
        for k in STEPS:
            b.step(k)
        assert a.iterations == b.iterations == 640
        assert np.array_equal(a.x, b.x)
        assert np.array_equal(a.best_boards, b.best_boards)
        assert a.trial_stats == b.trial_stats


def test_the_stepper_matches_the_command_lines_certificates(p5, cli, tmp_path):
    f = tmp_path / "p.txt"
    p5.write(f)
    for method, extra, make in [
        ("rrr", [], lambda: concur.F1Map(p5, trials=4, seed=11)),
        ("dc", ["--layout", "plain"], lambda: concur.DcMap(p5, trials=4, seed=11, layout="plain")),
    ]:
        d = tmp_path / method
        cli("solve", str(f), "--method", method, "--seed", "11", "--trials", "4", "--max-iters", "640",
            "--all-trials", "--dump-state", str(d), "--dump-all", "--backend", "cpu", "--json", *extra)
        certs = [json.loads((d / f"trial-{t}.json").read_text()) for t in range(4)]
        assert check_against(make(), certs) == 4


def test_a_planted_solution_is_a_fixed_point(p5):
    s = concur.F1Map(p5, trials=2, seed=1)
    planted = p5.planted
    k = p5.colors
    x = np.zeros((p5.cells, 4, k), dtype=np.float32)
    for c, (piece, rot) in enumerate(planted):
        colours = p5.pieces[piece]
        for side in range(4):
            # Turned clockwise by rot, side `side` shows the stored side (side - rot) mod 4.
            x[c, side, colours[(side - rot) % 4]] = 1.0
    s.set_x(x.reshape(-1), trial=1)
    assert np.array_equal(s.x[1], x.reshape(-1))
    assert s.gap[1] < 1e-6 and s.scores[1] == p5.max_score
    assert concur.verify(p5, s.boards[1])["valid"]
    s.step(1)
    assert s.solved[1] and s.solved_at[1] == 1
    assert np.allclose(s.x[1], x.reshape(-1))


def test_set_x_and_what_the_stepper_refuses(p4):
    s = concur.F1Map(p4, trials=3, seed=2)
    x = s.x
    x[0] += 0.25
    s.set_x(x)
    assert np.array_equal(s.x, x)
    for bad in (x[:2], np.zeros((3, 5)), [[float("nan")] * s.dim] * 3, "x"):
        with pytest.raises(concur.InputError):
            s.set_x(bad)
    with pytest.raises(concur.InputError):
        s.set_x(x[0], trial=7)
    with pytest.raises(concur.SpecError, match="divide and concur steps on the cpu backend"):
        concur.DcMap(p4, backend="gpu")
    with pytest.raises(concur.SpecError, match="adapter"):
        concur.F1Map(p4, adapter="any")
    with pytest.raises(concur.SpecError):
        concur.F1Map(p4, keep_going=True)
    with pytest.raises(concur.SpecError):
        concur.F1Map(p4, map="dc")
    with pytest.raises(concur.SpecError, match="--layout is an option of --method dc"):
        concur.F1Map(p4, layout="plain")
    with pytest.raises(concur.SpecError):
        concur.DcMap(p4, join_weights=(1, 1, 4))
    with pytest.raises(concur.SpecError):
        concur.F1Map(p4, assign="gpu-jv")
    assert s.weights is None and "F1Map" in repr(s)
