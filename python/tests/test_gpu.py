"""The GPU backend from Python: on lavapipe in CI (REQUIRE_GPU=1); skipped without an adapter
otherwise."""

from __future__ import annotations

import os

import numpy as np
import pytest

import concur


@pytest.fixture(scope="module")
def adapter() -> str:
    found = concur.adapters()
    if not found:
        if os.environ.get("REQUIRE_GPU") == "1":
            pytest.fail("REQUIRE_GPU=1 but no GPU adapter was found")
        pytest.skip("no GPU adapter (install mesa-vulkan-drivers for lavapipe)")
    # A hardware adapter when there is one, else the software one (named, as --adapter does).
    hardware = [a for a in found if a["device_type"] != "Cpu"]
    return (hardware or found)[0]["name"]


def test_rrr_and_dc_solve_on_the_gpu(adapter, p4):
    for method, options in [("rrr", {}), ("dc", {"layout": "plain"})]:
        r = concur.solve(p4, method, backend="gpu", adapter=adapter, trials=8, seed=1, max_iters=20_000, **options)
        assert r.solved and concur.verify(p4, r.board)["valid"], method
        assert r.stats["backend"].startswith("gpu"), r.stats["backend"]
        assert len(r.trial_iterations) == 8


def test_rate_mode_on_the_gpu(adapter, p4):
    found = []
    for s in concur.solutions(p4, backend="gpu", adapter=adapter, trials=8, seed=2, max_iters=4_000):
        assert concur.verify(p4, s.board)["valid"]
        found.append(s)
        if len(found) == 3:
            break
    assert len(found) == 3


def test_what_the_gpu_does_not_run_is_a_spec_error(adapter, p4):
    with pytest.raises(concur.SpecError):
        concur.solve(p4, backend="gpu", adapter=adapter, kick=0.5)
    with pytest.raises(concur.DeviceError):
        concur.solve(p4, backend="gpu", adapter="no adapter has this name")


def _pair(p, adapter, **options):
    """The same F1 batch on the CPU and on the device."""
    cpu = concur.F1Map(p, backend="cpu", **options)
    gpu = concur.F1Map(p, backend="gpu", adapter=adapter, **options)
    return cpu, gpu


def _agree(cpu, gpu, what):
    """Counters, best scores and best boards exactly; iterates within float32 rounding."""
    assert gpu.trial_iterations.tolist() == cpu.trial_iterations.tolist(), what
    assert gpu.best_scores.tolist() == cpu.best_scores.tolist(), what
    assert gpu.solved_at.tolist() == cpu.solved_at.tolist(), what
    assert gpu.trial_stats == cpu.trial_stats, what
    assert np.array_equal(gpu.best_boards, cpu.best_boards), what
    assert np.allclose(gpu.x, cpu.x, rtol=1e-4, atol=1e-4), what
    # The projections are the host's, of the iterates read back: the same boards.
    assert gpu.boards.tolist() == cpu.boards.tolist(), what
    assert np.allclose(gpu.gap, cpu.gap, rtol=1e-3, atol=1e-3), what


def test_the_f1_stepper_on_the_gpu_follows_the_cpus(adapter):
    p = concur.Puzzle.generate(4, 4, seed=31)
    cpu, gpu = _pair(p, adapter, trials=4, seed=31, restart_stall=40, max_iters=300)
    assert np.array_equal(gpu.x, cpu.x), "the same starts, bit for bit"
    for k in [1, 5, 58, 64, 100]:
        cpu.step(k)
        gpu.step(k)
        _agree(cpu, gpu, f"after {gpu.iterations}")
    assert gpu.iterations == cpu.iterations == 228
    proj = gpu.projections()
    assert proj["pa_fb"].shape == proj["pb_fa"].shape == gpu.x.shape
    # A state written, then stepped, on both.
    rng = np.random.default_rng(3)
    x = rng.random(gpu.dim, dtype=np.float32)
    cpu.set_x(x, trial=1)
    gpu.set_x(x, trial=1)
    assert np.array_equal(gpu.x[1], x)
    cpu.step(40)
    gpu.step(40)
    _agree(cpu, gpu, "after set_x")


def test_the_gpu_stepper_steps_k_then_k_as_2k(adapter, p4):
    a = concur.F1Map(p4, backend="gpu", adapter=adapter, trials=3, seed=5, max_iters=500)
    b = concur.F1Map(p4, backend="gpu", adapter=adapter, trials=3, seed=5, max_iters=500)
    a.step(45)
    a.step(45)
    b.step(90)
    assert np.array_equal(a.x, b.x)
    assert a.trial_stats == b.trial_stats


def test_what_the_gpu_stepper_does_not_run_is_a_spec_error(adapter, p4):
    with pytest.raises(concur.SpecError):
        concur.F1Map(p4, backend="gpu", adapter=adapter, kick=0.5)
    with pytest.raises(concur.SpecError, match="cpu"):
        concur.F1Map(p4, backend="gpu", adapter=adapter, assign="cpu")
    with pytest.raises(concur.SpecError, match="divide and concur"):
        concur.DcMap(p4, backend="gpu", adapter=adapter)


def test_the_gpu_stepper_without_its_adapter_is_a_device_error(p4):
    # Runs with no GPU at all: a clear error, never a panic.
    with pytest.raises(concur.DeviceError):
        concur.F1Map(p4, backend="gpu", adapter="no adapter has this name")
    with pytest.raises(concur.SpecError):
        concur.F1Map(p4, backend="cpu", adapter="any")
