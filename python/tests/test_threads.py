"""Behaving as Python code should: the GIL is released while the engine works, and Ctrl-C
(SIGINT) raises KeyboardInterrupt within about a second, after which the module still works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import concur


def ticks_during(work) -> tuple[int, float]:
    """How often another Python thread ran while `work` ran, and how long `work` took."""
    count = 0
    done = threading.Event()

    def tick():
        nonlocal count
        while not done.is_set():
            count += 1
            time.sleep(0.005)

    t = threading.Thread(target=tick)
    t.start()
    t0 = time.monotonic()
    try:
        work()
    finally:
        elapsed = time.monotonic() - t0
        done.set()
        t.join()
    return count, elapsed


def test_another_thread_runs_during_a_solve_a_step_and_a_count():
    p = concur.Puzzle.generate(7, 7, seed=4)
    n, s = ticks_during(lambda: concur.solve(p, trials=2, threads=1, time_limit=1.0, backend="cpu"))
    assert s >= 0.9 and n >= 0.3 * s / 0.005, (n, s)
    stepper = concur.F1Map(p, trials=4, threads=1)
    n, s = ticks_during(lambda: stepper.step(3000))
    assert n >= 0.3 * s / 0.005, (n, s)
    n, s = ticks_during(lambda: concur.count(p, "scan", threads=1, time_limit=0.8))
    assert n >= 0.3 * s / 0.005, (n, s)


def test_two_solves_run_at_once_in_two_threads(p4):
    out = {}

    def run(seed):
        out[seed] = concur.solve(p4, trials=4, seed=seed, threads=1, backend="cpu")

    ts = [threading.Thread(target=run, args=(s,)) for s in (1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert out[1].solved and out[2].solved


SCRIPT = textwrap.dedent(
    """
    import sys, time
    import concur
    p = concur.Puzzle.generate(8, 8, seed=1)
    what = sys.argv[1]
    print("ready", flush=True)
    try:
        if what == "solve":
            concur.solve(p, trials=2, threads=1, time_limit=120, backend="cpu")
        elif what == "scan":
            concur.solve(p, "scan", threads=1, time_limit=120)
        elif what == "step":
            concur.F1Map(p, trials=2, threads=1).step(10_000_000)
        elif what == "solutions":
            for s in concur.solutions(p, trials=2, threads=1, time_limit=120, backend="cpu"):
                pass
        elif what == "count":
            concur.count(p, "scan", threads=1, time_limit=120)
        print("not interrupted", flush=True)
    except KeyboardInterrupt:
        print("interrupted at", time.monotonic(), flush=True)
    q = concur.Puzzle.generate(4, 4, seed=7)
    print("after:", concur.solve(q, trials=2, seed=1, backend="cpu").solved, flush=True)
    """
)


@pytest.mark.parametrize("what", ["solve", "scan", "step", "solutions", "count"])
def test_ctrl_c_raises_keyboard_interrupt_within_a_second(what):
    env = dict(os.environ, NODEVICE_SELECT="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, what], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # inside the engine by now
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline()
        assert line.startswith("interrupted at"), (line, proc.stderr.read() if proc.poll() is not None else "")
        delay = float(line.split()[-1]) - sent
        assert delay < 1.5, f"{what}: KeyboardInterrupt came {delay:.2f} s after SIGINT"
        assert proc.stdout.readline().strip() == "after: True"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_an_uncaught_ctrl_c_ends_the_process_with_keyboard_interrupt():
    code = "import concur; p = concur.Puzzle.generate(8, 8, seed=1); print('ready', flush=True); " \
           "concur.solve(p, trials=2, threads=1, time_limit=120, backend='cpu')"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, NODEVICE_SELECT="1"))
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.8)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 2.0
    assert "KeyboardInterrupt" in err and proc.returncode != 0
