"""Bad input never crashes the interpreter: the corpus of bad puzzle files in data/bad and
seeded mutations of valid puzzles (both formats), as tests/fuzz.rs makes them, either read
or raise InputError; random boards either verify or raise InputError."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import concur

BAD = sorted((Path(__file__).parent / "data" / "bad").iterdir())

# Fragments that parsers trip over (tests/fuzz.rs uses the same kinds).
TOKENS = [b"-1", b"0", b"4294967296", b"18446744073709551616", b"1e999", b"-0", b"NaN", b"null", b"true",
          b'""', b"[", b"]", b"{", b"}", b",", b":", b"\n", b" ", b"\t", b"#", b'"', b"999999999", b"0x10",
          "\ufeff".encode(), b"\x00"]


def mutate(base: bytes, rng: random.Random) -> bytes:
    """One to four random edits: flip a bit, delete, duplicate or move a range, insert a token
    or a byte, truncate, replace a number."""
    v = bytearray(base)
    for _ in range(rng.randint(1, 4)):
        n = len(v)
        at = rng.randrange(n) if n else 0
        op = rng.randrange(7)
        if op == 0 and n:
            v[at] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            del v[at:at + rng.randint(1, 16)]
        elif op == 2 and n:
            piece = v[at:at + rng.randint(1, 32)]
            to = rng.randint(0, len(v))
            v[to:to] = piece
        elif op == 3:
            v[at:at] = rng.choice(TOKENS)
        elif op == 4:
            v.insert(at, rng.randrange(256))
        elif op == 5 and n:
            del v[at:]
        elif n > 1:
            digits = [i for i in range(at, n) if chr(v[i]).isdigit()]
            if digits:
                d = digits[0]
                end = d
                while end < n and chr(v[end]).isdigit():
                    end += 1
                v[d:end] = rng.choice(TOKENS)
    return bytes(v)


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_every_bad_file_raises_input_error(path):
    with pytest.raises(concur.InputError) as e:
        concur.Puzzle.read(path)
    assert "\n" not in str(e.value), "a one-line reason"
    with pytest.raises(concur.InputError):
        concur.Puzzle.parse(path.read_bytes())


def test_mutated_puzzles_read_or_raise_input_error():
    rng = random.Random(20261205)
    plain = concur.Puzzle.generate(4, 3, seed=1)
    planted = plain.planted
    hinted = concur.Puzzle.from_pieces(plain.pieces, [(0, int(planted[0, 0]), int(planted[0, 1]))], width=4)
    bases = [plain.to_text().encode(), hinted.to_text().encode()]
    read = refused = 0
    for i in range(1500):
        data = mutate(bases[i % 2], rng)
        try:
            p = concur.Puzzle.parse(data)
        except concur.InputError:
            refused += 1
            continue
        read += 1
        # What reads is a valid puzzle: every property answers.
        assert p.pieces.shape == (p.cells, 4)
        assert p.max_score == 2 * p.cells - p.width - p.height
    assert refused > 500 and read > 10, (read, refused)


def test_random_boards_verify_or_raise_input_error(p4):
    rng = np.random.default_rng(3)
    answered = 0
    for _ in range(400):
        shapes = [(16, 2), (15, 2), (16, 3), (0, 2), (16,)]
        shape = shapes[rng.choice(len(shapes), p=[0.6, 0.1, 0.1, 0.1, 0.1])]
        high = [20, 70000][rng.integers(2)]
        board = rng.integers(-1, high, size=shape)
        try:
            v = concur.verify(p4, board)
        except concur.InputError:
            continue
        answered += 1
        assert isinstance(v["valid"], bool) and 0 <= v["score"] <= p4.max_score
        try:
            svg = concur.render_svg(p4, board)
            assert svg.lstrip().startswith("<svg")
        except concur.InputError:
            pass
        assert 0 <= p4.score(board) <= p4.max_score
    assert answered > 50
    for bad in ("text", None, [[0.5, 1]] * 16, [[np.inf, 0]] * 16):
        with pytest.raises(concur.InputError):
            concur.verify(p4, bad)
