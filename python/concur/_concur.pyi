"""Type stubs of the compiled module concur._concur (re-exported by the package concur)."""

from collections.abc import Callable
from os import PathLike
from typing import Any, TypeAlias, final

import numpy as np
import numpy.typing as npt

__version__: str

BoardLike: TypeAlias = npt.ArrayLike | Result | Solution

@final
class Puzzle:
    @staticmethod
    def read(path: str | PathLike[str]) -> Puzzle: ...
    @staticmethod
    def parse(data: str | bytes) -> Puzzle: ...
    @staticmethod
    def generate(
        width: int,
        height: int,
        *,
        frame_colors: int | None = None,
        inner_colors: int | None = None,
        seed: int = 0,
        unique: bool = False,
        unique_attempts: int = 200,
        unique_nodes: int = 2_000_000,
    ) -> Puzzle: ...
    @staticmethod
    def from_pieces(
        pieces: npt.ArrayLike,
        hints: npt.ArrayLike | None = None,
        *,
        width: int | None = None,
        height: int | None = None,
    ) -> Puzzle: ...
    @property
    def pieces(self) -> npt.NDArray[np.int64]: ...
    @property
    def hints(self) -> npt.NDArray[np.int64]: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def cells(self) -> int: ...
    @property
    def colors(self) -> int: ...
    @property
    def max_score(self) -> int: ...
    @property
    def planted(self) -> npt.NDArray[np.int64] | None: ...
    def to_text(self) -> str: ...
    def write(self, path: str | PathLike[str]) -> None: ...
    def score(self, board: BoardLike) -> int: ...
    def viewer_link(self, board: BoardLike) -> str | None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Result:
    method: str
    solved: bool
    score: int
    max_score: int
    viewer_link: str | None
    board: npt.NDArray[np.int64] | None
    stats: dict[str, Any]
    json: str
    wall_s: float
    work: int
    work_unit: str
    mechanism: str | None
    trial_iterations: npt.NDArray[np.int64]
    trial_solved: npt.NDArray[np.bool_]
    trial_solved_at: npt.NDArray[np.int64]
    trial_best_score: npt.NDArray[np.int64]
    trial_solutions: npt.NDArray[np.int64]
    trials: list[dict[str, Any]]
    solutions: list[Solution] | None
    distinct_solutions: int | None
    notes: list[str]
    certificates: list[dict[str, Any]]
    certificate_error: str | None

@final
class Solution:
    index: int
    trial: int
    iterations: int
    trial_iteration: int
    mechanism: str
    wall_s: float
    batch_trial_iterations: int
    class_id: int
    new_class: bool
    viewer_link: str | None
    text: str
    board: npt.NDArray[np.int64]

@final
class _SolutionStream:
    def __init__(
        self, puzzle: Puzzle, given: dict[str, Any], progress: Callable[[dict[str, Any]], Any] | None = None
    ) -> None: ...
    def next_item(self) -> Solution | Result | None: ...
    def close(self) -> None: ...

class _Stepper:
    def __new__(
        cls,
        puzzle: Puzzle,
        formulation: str,
        given: dict[str, Any],
        backend: str = "cpu",
        adapter: str | None = None,
    ) -> Any: ...
    def step(self, k: int = 1) -> None: ...
    @property
    def x(self) -> npt.NDArray[np.float32]: ...
    def set_x(self, x: npt.ArrayLike, trial: int | None = None) -> None: ...
    def projections(self) -> dict[str, Any]: ...
    @property
    def gap(self) -> npt.NDArray[np.float64]: ...
    @property
    def boards(self) -> npt.NDArray[np.int64]: ...
    @property
    def scores(self) -> npt.NDArray[np.int64]: ...
    @property
    def best_boards(self) -> npt.NDArray[np.int64]: ...
    @property
    def best_scores(self) -> npt.NDArray[np.int64]: ...
    @property
    def solved(self) -> npt.NDArray[np.bool_]: ...
    @property
    def solved_at(self) -> npt.NDArray[np.int64]: ...
    @property
    def trial_iterations(self) -> npt.NDArray[np.int64]: ...
    @property
    def iterations(self) -> int: ...
    @property
    def trial_stats(self) -> list[dict[str, Any]]: ...
    @property
    def trials(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def weights(self) -> npt.NDArray[np.float32] | None: ...
    def certificate(self, trial: int) -> dict[str, Any]: ...

def _solve(
    puzzle: Puzzle,
    given: dict[str, Any],
    progress: Callable[[dict[str, Any]], Any] | None = None,
    certify: str | None = None,
) -> Result: ...
def verify(puzzle: Puzzle, board: BoardLike) -> dict[str, Any]: ...
def count(
    puzzle: Puzzle,
    engine: str = "scan",
    *,
    limit: int | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
) -> dict[str, Any]: ...
def render_svg(puzzle: Puzzle, board: BoardLike) -> str: ...
def read_solution(puzzle: Puzzle, path: str | PathLike[str]) -> npt.NDArray[np.int64]: ...
def adapters() -> list[dict[str, str]]: ...
def _read_results(path: str | PathLike[str]) -> list[dict[str, Any]]: ...
def _options(method: str) -> list[dict[str, Any]]: ...
def _methods() -> list[str]: ...
