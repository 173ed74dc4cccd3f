"""The GPU backend from Python: on lavapipe in CI (REQUIRE_GPU=1); skipped without an adapter
otherwise."""

from __future__ import annotations

import os

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
