"""concur.solutions: rate mode as a generator, stopped cleanly by the consumer."""

from __future__ import annotations

import gc
import inspect
import time

import pytest

import concur


def test_yields_verified_solutions_and_returns_the_result(p4):
    gen = concur.solutions(p4, trials=4, seed=1, max_iters=6_000, backend="cpu")
    assert inspect.isgenerator(gen)
    found = []
    while True:
        try:
            found.append(next(gen))
        except StopIteration as stop:
            result = stop.value
            break
    assert found and isinstance(result, concur.Result)
    assert result.solutions is not None and len(result.solutions) == len(found)
    for s, r in zip(found, result.solutions):
        assert (s.index, s.trial, s.iterations, s.trial_iteration) == (r.index, r.trial, r.iterations, r.trial_iteration)
        assert concur.verify(p4, s.board)["valid"]
        assert s.viewer_link == p4.viewer_link(s.board)
    # The same seed and budget give the same solutions as solve's rate mode.
    again = concur.solve(p4, trials=4, seed=1, max_iters=6_000, backend="cpu", keep_going=True)
    assert [(s.trial, s.iterations) for s in again.solutions] == [(s.trial, s.iterations) for s in found]


def test_break_stops_an_unbounded_run_at_once():
    p = concur.Puzzle.generate(5, 5, seed=3)
    t0 = time.monotonic()
    gen = concur.solutions(p, trials=4, threads=1, time_limit=600, backend="cpu")
    for s in gen:
        assert concur.verify(p, s.board)["valid"]
        break
    t1 = time.monotonic()
    gen.close()
    assert time.monotonic() - t1 < 2.0, "close() waits for the run to stop at its next round"
    assert t1 - t0 < 120


def test_a_dropped_generator_stops_its_run():
    p = concur.Puzzle.generate(5, 5, seed=3)
    gen = concur.solutions(p, trials=2, threads=1, time_limit=600, backend="cpu")
    next(gen)
    t0 = time.monotonic()
    del gen
    gc.collect()
    assert time.monotonic() - t0 < 2.0
    # An unstarted one too.
    gen = concur.solutions(p, trials=2, threads=1, time_limit=600, backend="cpu")
    del gen
    gc.collect()
    # The module goes on working.
    assert concur.solve(p, trials=2, seed=1, backend="cpu").solved


def test_bad_options_raise_at_the_call(p4):
    with pytest.raises(concur.SpecError):
        concur.solutions(p4, layout="plain")
    with pytest.raises(concur.SpecError):
        concur.solutions(p4, "scan")
    with pytest.raises(concur.SpecError):
        concur.solutions(p4, keep_going=False)


def test_progress_hears_the_solutions_so_far():
    p = concur.Puzzle.generate(5, 5, seed=3)
    heard = []
    found = list(concur.solutions(p, trials=2, threads=1, time_limit=1.0, backend="cpu", progress=heard.append))
    assert heard and heard[-1]["solutions"] <= len(found)
