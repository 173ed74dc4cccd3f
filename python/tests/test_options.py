"""The options as the engine declares them: the steppers' and solve()'s defaults are the
engine's (read from its tables, not written again in Python), and help() shows them."""

import inspect
import pathlib
import pydoc
import re

import pytest

import concur


def test_options_are_the_engines_tables():
    rrr = concur.options("rrr")
    # The run's options first, then the method's, with the engine's defaults.
    assert list(rrr)[:2] == ["seed", "time_limit"]
    assert rrr["trials"] == 8 and rrr["beta"] == 0.7 and rrr["join_weights"] == [1.0, 1.0, 4.0]
    assert "max_nodes" not in rrr and "layout" not in rrr
    dc = concur.options("dc")
    assert dc["layout"] == "hybrid" and "fused_passes" not in dc and "edge" not in dc
    assert "fused_passes" in rrr and "fused_passes" not in concur.options("dm")
    assert concur.options("scan")["restart_base"] == 1 << 20
    assert concur.options("backtrack")["restart_base"] == 256
    with pytest.raises(concur.SpecError):
        concur.options("nope")


def test_every_option_key_is_taken_by_solve_for_its_method():
    p = concur.Puzzle.generate(3, 3, seed=1)
    for method in ["rrr", "dc", "scan", "hill"]:
        opts = concur.options(method)
        assert opts, method
        # A key the method does not have is refused naming it; one it has is not refused as unknown.
        with pytest.raises(concur.SpecError) as e:
            concur.solve(p, method, not_an_option=1)
        assert "not_an_option" in str(e.value) or "not-an-option" in str(e.value)


@pytest.mark.parametrize(
    ("cls", "method", "keys"),
    [(concur.F1Map, "rrr", ["trials", "beta", "seed"]), (concur.DcMap, "dc", ["trials", "beta", "seed"])],
)
def test_the_steppers_defaults_and_their_help_are_the_engines(cls, method, keys):
    engine = concur.options(method)
    params = inspect.signature(cls.__new__).parameters
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    for key in keys:
        assert params[key].default == engine[key], key
        shown = rf"{key}: '?{type(engine[key]).__name__}'? = {re.escape(repr(engine[key]))}\b"
        assert re.search(shown, text), (key, shown)
    if cls is concur.F1Map:
        assert list(params["join_weights"].default) == engine["join_weights"]
        assert re.search(r"join_weights: '?Iterable\[float\]'? = \(1\.0, 1\.0, 4\.0\)", text)


def test_solve_s_defaults_are_the_engines():
    params = inspect.signature(concur.solve).parameters
    engine = concur.options("rrr")
    assert params["seed"].default == engine["seed"] == 0
    assert params["backend"].default == engine["backend"] == "auto"


def test_the_stub_of_options_is_the_engines():
    # The committed stub is what the engine's tables make (python -m concur._stubs writes it).
    from concur import _stubs

    committed = pathlib.Path(__file__).parent.parent / "concur" / "_options.pyi"
    assert committed.read_text() == _stubs.render(), "run: python -m concur._stubs > python/concur/_options.pyi"
    text = _stubs.render()
    # Every option of every method is typed, beyond the named arguments, with its default.
    for method in concur._concur._methods():
        for key, default in concur.options(method).items():
            if key in _stubs._named(concur.solve):
                continue
            assert re.search(rf"^    {key}: ", text, re.M), (method, key)
    assert re.search(r"^    join_weights: Sequence\[float\]\n    \"\"\".*Default: \[1\.0, 1\.0, 4\.0\]", text, re.M | re.S)
    assert re.search(r"^    layout: str\n    \"\"\"[^\"]*Default:\s+'hybrid'\.", text, re.M)
    assert re.search(r"^    restart_base: int\n    \"\"\".*Default: 256 \(backtrack\), 1048576 \(scan\)", text, re.M)
    # A key named in a signature is not repeated in its entry point's options.
    f1 = text.split("class F1MapOptions")[1].split("class DcMapOptions")[0]
    assert "\n    beta:" not in f1 and "\n    edge:" in f1
