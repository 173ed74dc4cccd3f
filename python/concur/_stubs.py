"""The types of the keyword arguments ``**options``, made from the engine's option tables.

``python -m concur._stubs > python/concur/_options.pyi`` writes the package's stub of them:
one ``TypedDict`` per entry point
(:func:`concur.solve` and :func:`concur.solutions`, :class:`concur.F1Map`,
:class:`concur.DcMap`), each key with its type, the engine's default and its doc. The
signatures annotate ``**options`` with them, so a type checker knows every option.
``python/tests/test_options.py`` fails when the committed file is not what this module makes
from the engine it was built with.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

from . import _concur

HEAD = '''"""The keyword arguments ``**options`` of concur's entry points, each with its type, the
engine's default and its doc. Made from the engine's option tables by ``python -m
concur._stubs > python/concur/_options.pyi``; do not edit (python/tests/test_options.py
holds it to the engine)."""

import os
from collections.abc import Sequence
from typing import TypedDict
'''


def _rows(methods: list[str]) -> dict[str, dict[str, Any]]:
    """The options of ``methods``, by key, in the tables' order, each with its defaults by
    method; a key two methods share has one type and one doc."""
    rows: dict[str, dict[str, Any]] = {}
    for method in methods:
        for row in _concur._options(method):
            seen = rows.setdefault(row["key"], dict(row, defaults={}))
            if seen["type"] != row["type"]:
                raise ValueError(f"{row['key']}: {seen['type']} in one table, {row['type']} in another")
            seen["defaults"][method] = row["default"]
    return rows


def _default(defaults: dict[str, Any]) -> str:
    """A key's default, or its default per method where the methods' differ."""
    shown = {m: "not set" if d is None else repr(d) for m, d in defaults.items()}
    if len(set(shown.values())) == 1:
        return next(iter(shown.values()))
    return ", ".join(f"{d} ({m})" for m, d in shown.items())


def _typed_dict(name: str, doc: str, methods: list[str], named: set[str]) -> str:
    out = [f"class {name}(TypedDict, total=False):", f'    """{doc}"""', ""]
    for key, row in _rows(methods).items():
        if key in named:
            continue
        text = f"{row['doc']} Default: {_default(row['defaults'])}."
        wrapped = textwrap.wrap(text, width=92, break_on_hyphens=False)
        out.append(f"    {key}: {row['type']}")
        out.append('    """' + "\n    ".join(wrapped) + '"""')
    return "\n".join(out) + "\n"


def _named(function: Any) -> set[str]:
    """The named parameters of ``function`` (its ``**options`` take the rest)."""
    return {p.name for p in inspect.signature(function).parameters.values() if p.kind == p.KEYWORD_ONLY}


def render() -> str:
    """The text of ``concur/_options.pyi`` for the engine this package was built with."""
    import concur

    methods = _concur._methods()
    maps = [m for m in methods if m in ("rrr", "dm")]
    parts = [
        HEAD,
        _typed_dict(
            "SolveOptions",
            "The options of concur.solve() and concur.solutions() beyond their named arguments: every method's.",
            methods,
            _named(concur.solve),
        ),
        _typed_dict(
            "F1MapOptions",
            "The options of concur.F1Map beyond its named arguments: rrr's and dm's.",
            maps,
            _named(concur.F1Map.__new__),
        ),
        _typed_dict(
            "DcMapOptions",
            "The options of concur.DcMap beyond its named arguments: dc's.",
            ["dc"],
            _named(concur.DcMap.__new__) | {"dc_map"},
        ),
    ]
    return "\n\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
