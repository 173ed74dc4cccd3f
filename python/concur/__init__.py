"""concur from Python: Veit Elser's iterated maps (RRR and the difference map in edge-colour
space, Gravel & Elser's divide and concur) and the search controls of the ``concur`` engine,
for edge-matching puzzles of the Eternity II family.

Every run goes through the engine's one entry point with the options the command line has,
under the same names (``--join-weights`` is ``join_weights=``), so an option the method does
not have or would not use raises :class:`SpecError` with the command line's one-line reason.
Runs release the GIL, answer Ctrl-C within about a second (``KeyboardInterrupt``), and every
solution they report has passed the exact board check.

>>> import concur
>>> p = concur.Puzzle.generate(5, 5, seed=1)
>>> r = concur.solve(p, "rrr", trials=4, seed=1)
>>> r.solved, r.score == p.max_score
(True, True)

See docs/python.md in the repository for the whole API.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterable
from os import PathLike
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._options import DcMapOptions, F1MapOptions, SolveOptions

# On a machine without a login session (no valid XDG_RUNTIME_DIR), Mesa's Vulkan
# device-selection layer, loaded while the GPU adapters are probed, prints "error:
# XDG_RUNTIME_DIR is invalid or not set"; it only orders devices for a display, so it is
# switched off there (Mesa's own NODEVICE_SELECT=1), as the concur binary does. A user's own
# setting is left alone.
if "NODEVICE_SELECT" not in os.environ and not os.path.isdir(os.environ.get("XDG_RUNTIME_DIR", "") or "/nonexistent"):
    os.environ["NODEVICE_SELECT"] = "1"

from ._errors import ConcurError, DeviceError, InputError, ResourceError, SpecError
from . import _concur
from ._concur import (
    Puzzle,
    Result,
    Solution,
    adapters,
    count,
    read_solution,
    render_svg,
    verify,
)

__version__: str = _concur.__version__

__all__ = [
    "ConcurError",
    "DcMap",
    "DeviceError",
    "F1Map",
    "InputError",
    "Puzzle",
    "ResourceError",
    "Result",
    "Solution",
    "SpecError",
    "adapters",
    "count",
    "options",
    "read_results",
    "read_solution",
    "render_svg",
    "solutions",
    "solve",
    "verify",
]

Progress = Callable[[dict[str, Any]], Any]


def options(method: str = "rrr") -> dict[str, Any]:
    """The options ``method`` takes, each with its default, as the engine declares them (one
    table per options type; the command line's flags and a ladder's keys come from the same
    tables): the keyword arguments of :func:`solve`, :func:`solutions` and the steppers, the
    run's own first. ``concur.options("dc")["layout"]`` is ``"hybrid"``. A default of None
    means "not set" (the option is off, or the engine chooses, as its doc says)."""
    return {o["key"]: o["default"] for o in _concur._options(method)}


# The defaults written in the signatures below are the engine's, read once at import.
_RRR = options("rrr")
_DC = options("dc")


def _puzzle(puzzle: Any) -> Puzzle:
    if not isinstance(puzzle, Puzzle):
        raise TypeError(f"expected a concur.Puzzle, got {type(puzzle).__name__}")
    return puzzle


def _progress(progress: Any) -> Progress | None:
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable or None, got {type(progress).__name__}")
    return progress


def _given(method: str, named: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The options as ``SolveSpec::from_given`` reads them: the method, the named arguments
    that were given (not those left at None) and the method's options (None: not given)."""
    given: dict[str, Any] = {"method": method}
    for key, value in list(named.items()) + list(options.items()):
        if value is not None:
            given[key] = value
    return given


def solve(
    puzzle: Puzzle,
    method: str = "rrr",
    *,
    trials: int | None = None,
    threads: int | None = None,
    seed: int = _RRR["seed"],
    time_limit: float | None = None,
    max_iters: int | None = None,
    max_nodes: int | None = None,
    backend: str = _RRR["backend"],
    adapter: str | None = None,
    progress: Progress | None = None,
    certify: str | None = None,
    **options: Unpack[SolveOptions],
) -> Result:
    """Solves ``puzzle`` with ``method`` and returns a :class:`Result`.

    ``method`` is one of ``rrr`` (the default), ``dm``, ``dc`` (the maps, run as a batch of
    ``trials`` independent trials on ``backend``), ``backtrack``, ``scan`` (tree searches),
    ``hill``, ``alns`` (local searches) or ``beam`` (the beam builder with ALNS polish). The
    named arguments and ``**options`` are the
    command line's flags under their names with ``_`` for ``-`` (``join_weights=[1, 1, 4]``,
    ``keep_going=True``, ``layout="plain"``, ``complete=4``...); an argument left at None is
    not given. A map's trials run ``max_iters`` iterations each (default 100,000, no cap
    under ``time_limit``) and the run stops at the first verified solution unless
    ``all_trials=True`` or ``keep_going=True`` (rate mode: every solution is recorded in
    :attr:`Result.solutions`; see also :func:`solutions`).

    ``backend``: ``"auto"`` (a hardware GPU if there is one, else the CPU; the note says
    which), ``"cpu"`` or ``"gpu"`` (with ``adapter=``, a part of the adapter's name, e.g.
    ``"llvmpipe"`` for lavapipe). ``progress``: a callable given a dict about every 0.2 s
    (from the run's thread, with the GIL taken) by the maps and the scan (the other searches
    report nothing as they go); an exception it raises ends the run and is raised here. ``certify``: ``"solved"`` or ``"all"``: fixed-point certificates of the
    solving trial or of every trial (CPU backend), in :attr:`Result.certificates`.

    The same seed and options give the same run as ``concur solve`` (its ``--json`` is
    :attr:`Result.stats`). The GIL is released while it runs; Ctrl-C stops it within about a
    second and raises ``KeyboardInterrupt``. Raises :class:`SpecError` for a bad option,
    :class:`ResourceError` when the batch does not fit the memory, :class:`DeviceError` for
    the GPU.
    """
    named = dict(
        trials=trials,
        threads=threads,
        seed=seed,
        time_limit=time_limit,
        max_iters=max_iters,
        max_nodes=max_nodes,
        backend=backend,
        adapter=adapter,
    )
    given = _given(method, named, options)
    return _concur._solve(_puzzle(puzzle), given, _progress(progress), certify)


def solutions(
    puzzle: Puzzle,
    method: str = "rrr",
    *,
    trials: int | None = None,
    threads: int | None = None,
    seed: int = _RRR["seed"],
    time_limit: float | None = None,
    max_iters: int | None = None,
    max_nodes: int | None = None,
    backend: str = _RRR["backend"],
    adapter: str | None = None,
    progress: Progress | None = None,
    **options: Unpack[SolveOptions],
) -> Generator[Solution, None, Result | None]:
    """Rate mode as a generator: runs ``method`` (a map: ``rrr``, ``dm`` or ``dc``) on
    ``puzzle`` with ``keep_going=True`` and yields every verified :class:`Solution` as it is
    found (each solved trial goes on from a fresh point of its own seeded stream). The
    arguments are :func:`solve`'s.

    The run starts at once on a thread of its own (options are checked here, so a bad one
    raises :class:`SpecError` at the call). It ends at its budget (``max_iters`` per trial,
    ``time_limit``), and the generator then returns the run's :class:`Result` (the value of
    ``StopIteration``, or of ``yield from``). Stopping early stops the run cleanly at its next
    round: ``break`` out of the loop, ``close()`` the generator, or drop it. Ctrl-C while
    waiting stops the run and raises ``KeyboardInterrupt``.

    >>> p = concur.Puzzle.generate(4, 4, seed=5)
    >>> for s in concur.solutions(p, trials=4, max_iters=20_000):
    ...     print(s.trial, s.iterations)
    ...     if s.index == 2:
    ...         break
    """
    named = dict(
        trials=trials,
        threads=threads,
        seed=seed,
        time_limit=time_limit,
        max_iters=max_iters,
        max_nodes=max_nodes,
        backend=backend,
        adapter=adapter,
    )
    if options.get("keep_going") is False:
        raise SpecError("solutions() is rate mode: keep_going cannot be False")
    options.pop("keep_going", None)
    given = _given(method, named, options)
    stream = _concur._SolutionStream(_puzzle(puzzle), given, _progress(progress))
    return _drain(stream)


def _drain(stream: Any) -> Generator[Solution, None, Result | None]:
    try:
        while True:
            item = stream.next_item()
            if item is None:
                return None
            if isinstance(item, Result):
                return item
            yield item
    finally:
        stream.close()


class F1Map(_concur._Stepper):
    """A stepper of F1 (``map="rrr"`` or ``"dm"``): a batch of ``trials`` trials of the map
    in edge-colour space on the CPU (or the GPU), advanced by :meth:`step`, for research.

    The trials start where ``concur solve`` starts them for the same ``seed`` and step with
    the same iteration, restarts (cycles, stalls: ``restart_stall``) and rounds, so after
    ``step`` has advanced them ``n`` iterations in all, :attr:`x` is the state of a command
    line run at iteration ``n`` (``--all-trials``; a trial that solved stands still after its
    solving iteration), and :meth:`projections`, :attr:`gap` and :attr:`boards` are what its
    certificate (``--dump-state``) would hold. ``**options`` are the options of ``rrr`` /
    ``dm`` (``edge``, ``restart_stall``, ``kick``, ``adapt``, ``complete``...);
    ``max_iters`` caps each trial (default: no cap); ``threads`` sizes the pool it steps on.

    ``backend="gpu"`` steps the batch on the device named by ``adapter`` (a part of its name;
    default wgpu's high-performance choice), its states kept there between steps: the same starts, rules
    and restarts, with the assignments on the device (``assign``: ``"gpu-jv"`` by default,
    ``"gpu-jv-sg"``, ``"gpu-jv-sg-staged"``, ``"gpu-auction"``); what the device does not
    run (``kick``, ``adapt``, ``complete``, ``assign="cpu"``...) raises :class:`SpecError`, and
    no adapter :class:`DeviceError`. Its iterates agree with the CPU's within float32
    rounding. :attr:`x` reads them back, :meth:`set_x` writes them, and
    :meth:`projections`, :attr:`gap` and :attr:`boards` are computed on the host from the
    iterates read back, as on the CPU. ``backend="auto"`` steps on the CPU.
    """

    def __new__(
        cls,
        puzzle: Puzzle,
        *,
        map: str = "rrr",
        trials: int = _RRR["trials"],
        beta: float = _RRR["beta"],
        join_weights: Iterable[float] = tuple(_RRR["join_weights"]),
        seed: int = _RRR["seed"],
        backend: str = "cpu",
        adapter: str | None = None,
        threads: int | None = None,
        max_iters: int | None = None,
        **options: Unpack[F1MapOptions],
    ) -> F1Map:
        named = dict(
            trials=trials,
            beta=beta,
            join_weights=list(join_weights),
            seed=seed,
            threads=threads,
            max_iters=max_iters,
        )
        given = _given(map, named, options)
        return super().__new__(cls, _puzzle(puzzle), "f1", given, backend, adapter)

    def __repr__(self) -> str:
        return f"F1Map(trials={self.trials}, dim={self.dim}, iterations={self.iterations})"


class DcMap(_concur._Stepper):
    """A stepper of divide and concur (Gravel & Elser), ``map="rrr"`` or ``"dm"`` between
    concur and divide: as :class:`F1Map`, with the replica slot values as the iterate
    (``x``: one row of ``dim`` slots per trial, the layout's slot order) and
    :attr:`weights` the constraint weights. ``**options`` are those of ``dc`` (``layout``,
    default ``"hybrid"`` as on the command line; ``weights``, ``gamma``, ``readout``,
    ``propagate``...). It steps on the CPU: ``backend="gpu"`` raises :class:`SpecError`
    (``concur.solve`` runs divide and concur on the GPU).
    """

    def __new__(
        cls,
        puzzle: Puzzle,
        *,
        map: str = "rrr",
        trials: int = _DC["trials"],
        beta: float = _DC["beta"],
        seed: int = _DC["seed"],
        backend: str = "cpu",
        threads: int | None = None,
        max_iters: int | None = None,
        **options: Unpack[DcMapOptions],
    ) -> DcMap:
        named = dict(dc_map=map, trials=trials, beta=beta, seed=seed, threads=threads, max_iters=max_iters)
        given = _given("dc", named, options)
        return super().__new__(cls, _puzzle(puzzle), "dc", given, backend)

    def __repr__(self) -> str:
        return f"DcMap(trials={self.trials}, dim={self.dim}, iterations={self.iterations})"


def read_results(path: str | PathLike[str], *, frame: bool = False) -> Any:
    """The run records of a ladder (``concur ladder --out DIR``): every ``*.jsonl`` file of
    the folder ``path`` (or the one file ``path``), each line a run (``instance``,
    ``method``, ``label``, ``solved``, ``work``, ``wall_s``, ``best_score``, ``trace``...),
    read and checked as ``concur report`` reads them.

    Returns a list of dicts; with ``frame=True`` a pandas DataFrame, one row per run
    (pandas is an optional dependency: ``pip install ./python[pandas]``).
    """
    records = _concur._read_results(path)
    if not frame:
        return records
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("read_results(frame=True) needs pandas: pip install pandas") from e
    return pandas.DataFrame.from_records(records)
