"""concur.Puzzle: every constructor, every property, and bad arrays raising InputError."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import concur
from conftest import puzzles_dir


def test_generate_has_the_shape_colours_and_a_planted_solution(p4):
    assert (p4.width, p4.height, p4.cells) == (4, 4, 16)
    assert p4.max_score == 2 * 16 - 4 - 4
    assert p4.pieces.shape == (16, 4) and p4.pieces.dtype == np.int64
    assert p4.colors == p4.pieces.max() + 1
    assert p4.hints.shape == (0, 3)
    planted = p4.planted
    assert planted.shape == (16, 2)
    v = concur.verify(p4, planted)
    assert v["valid"] and v["score"] == p4.max_score and v["problems"] == []
    assert p4.score(planted) == p4.max_score
    assert p4.viewer_link(planted).startswith("https://e2.bucas.name/#")
    # The same arguments give the same puzzle; another seed another.
    assert concur.Puzzle.generate(4, 4, seed=7) == p4
    assert concur.Puzzle.generate(4, 4, seed=8) != p4
    assert hash(concur.Puzzle.generate(4, 4, seed=7)) == hash(p4)
    assert "4x4" in repr(p4)


def test_generate_takes_colour_counts_and_refuses_impossible_ones():
    p = concur.Puzzle.generate(5, 4, frame_colors=2, inner_colors=3, seed=1)
    assert (p.width, p.height) == (5, 4)
    assert p.colors <= 1 + 2 + 3
    with pytest.raises(concur.InputError):
        concur.Puzzle.generate(1, 4)
    with pytest.raises(ValueError):  # InputError is a ValueError
        concur.Puzzle.generate(5, 5, frame_colors=0)


def test_generate_unique_proves_one_solution():
    p = concur.Puzzle.generate(4, 4, seed=3, frame_colors=3, inner_colors=4, unique=True, unique_attempts=50)
    c = concur.count(p, "ac")
    assert c["complete"] and c["up_to_rotation"] == 1
    assert concur.verify(p, p.planted)["valid"]


def test_text_round_trips_through_write_read_and_parse(p4, tmp_path):
    f = tmp_path / "p.txt"
    p4.write(f)
    assert concur.Puzzle.read(f) == p4
    assert concur.Puzzle.read(str(f)) == p4
    assert concur.Puzzle.parse(p4.to_text()) == p4
    assert concur.Puzzle.parse(p4.to_text().encode()) == p4
    assert concur.Puzzle.read(f).planted is None
    assert pickle.loads(pickle.dumps(p4)) == p4


def test_from_pieces_builds_the_same_puzzle_and_infers_the_shape(p4):
    assert concur.Puzzle.from_pieces(p4.pieces) == p4
    assert concur.Puzzle.from_pieces(p4.pieces.tolist()) == p4
    assert concur.Puzzle.from_pieces(p4.pieces.astype(np.uint8)) == p4
    assert concur.Puzzle.from_pieces(p4.pieces.astype(float)) == p4
    r = concur.Puzzle.generate(6, 4, seed=1)
    q = concur.Puzzle.from_pieces(r.pieces)
    assert (q.width, q.height) == (6, 4) and q == r
    assert concur.Puzzle.from_pieces(r.pieces, width=6) == r
    assert concur.Puzzle.from_pieces(r.pieces, height=4) == r
    assert concur.Puzzle.from_pieces(r.pieces, width=6, height=4) == r


def test_hints_fix_pieces_and_round_trip_as_json(p4, tmp_path):
    planted = p4.planted
    hints = [(0, int(planted[0, 0]), int(planted[0, 1])), (5, int(planted[5, 0]), int(planted[5, 1]))]
    for given in (hints, np.array(hints)):
        h = concur.Puzzle.from_pieces(p4.pieces, given)
        assert h.hints.tolist() == [list(x) for x in hints]
    h = concur.Puzzle.from_pieces(p4.pieces, hints)
    assert h.to_text().lstrip().startswith("{")
    f = tmp_path / "h.json"
    h.write(f)
    assert concur.Puzzle.read(f) == h
    assert concur.verify(h, planted)["valid"]
    # A board that breaks a hint is not a solution.
    swapped = planted.copy()
    swapped[[0, 3]] = swapped[[3, 0]]
    assert not concur.verify(h, swapped)["valid"]


@pytest.mark.parametrize(
    "pieces, why",
    [
        ([[0, 0, 1, 1]] * 3, "fit"),
        (np.zeros((16, 3)), "shape"),
        (np.zeros((16,)), "shape"),
        ([["a", "b", "c", "d"]] * 16, "integers"),
        (np.full((16, 4), 0.5), "integers"),
        ([[0, 0, 1]] + [[0, 0, 1, 1]] * 15, "integer"),
        (np.full((16, 4), np.nan), "integers"),
        ([[0, 0, 1, 1 << 70]] * 16, "integers"),
        ([[0, 0, -1, 1]] * 16, "colour"),
        ([[0, 0, 64, 1]] * 16, "colour"),
        ([[0, 0, 300, 1]] * 16, "colour"),
        ([], "pieces"),
        ("not an array", "shape"),
        (object(), "shape"),
    ],
)
def test_bad_piece_arrays_raise_input_error(pieces, why):
    with pytest.raises(concur.InputError):
        concur.Puzzle.from_pieces(pieces)


def test_bad_hints_and_sizes_raise_input_error(p4):
    for hints in ([(99, 0, 0)], [(0, 99, 0)], [(0, 0, 9)], [(0, 0, -1)], [(0, 0)], [(0, 0, 0), (0, 1, 0)]):
        with pytest.raises(concur.InputError):
            concur.Puzzle.from_pieces(p4.pieces, hints)
    with pytest.raises(concur.InputError):
        concur.Puzzle.from_pieces(p4.pieces, width=5)
    with pytest.raises(concur.InputError):
        concur.Puzzle.from_pieces(p4.pieces, width=2, height=8)


def test_reading_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        concur.Puzzle.read(tmp_path / "none.txt")
    with pytest.raises(concur.InputError):
        concur.Puzzle.parse(12)


def test_the_real_sets_read_when_present():
    d = puzzles_dir()
    if d is None:
        if os.environ.get("REQUIRE_PUZZLES") == "1":
            pytest.fail("REQUIRE_PUZZLES=1 but no puzzle sets ($CONCUR_PUZZLES or ../shared/puzzles)")
        pytest.skip("no puzzle sets ($CONCUR_PUZZLES or ../shared/puzzles)")
    p = concur.Puzzle.read(d / "brendan_owen" / "pieces_set_1" / "pieces_06x05.txt")
    assert (p.width, p.height) == (6, 5)
    e2 = concur.Puzzle.read(d / "eternity2_dev_cc0" / "e2-16x16-v00.json")
    assert (e2.width, e2.height, e2.max_score) == (16, 16, 480)
    assert len(e2.hints) > 0
    sol = concur.read_solution(p, d / "brendan_owen" / "solutions_set_1" / "solutions_06x05.txt")
    assert concur.verify(p, sol)["valid"]
