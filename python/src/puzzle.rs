//! `concur.Puzzle`: a validated puzzle, read, generated or built from an array of pieces.

use crate::blocking::blocking;
use crate::convert::{board_array, board_of, int_rows, matrix};
use crate::errors::{Kind, error, input, limit};
use concur::Cancel;
use concur::meter::Watch;
use concur::puzzle::format;
use concur::puzzle::generate::{GenerateOptions, generate};
use concur::puzzle::{Board, Hint, Piece, Puzzle, piece_class};
use concur::search::unique::{UniqueError, generate_unique_checked};
use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::path::PathBuf;
use std::sync::Arc;

/// An edge-matching puzzle: a board of ``width`` x ``height`` cells and as many square
/// pieces, each with four edge colours (up, right, down, left; 0 is the grey rim), and
/// optionally hints that fix pieces in cells. Build one with :meth:`Puzzle.read`,
/// :meth:`Puzzle.parse`, :meth:`Puzzle.generate` or :meth:`Puzzle.from_pieces`; every
/// constructor checks the puzzle (piece count, colours, rim, hints) and raises
/// :class:`concur.InputError` with a one-line reason when it does not hold.
#[pyclass(module = "concur", name = "Puzzle", frozen)]
pub struct PyPuzzle {
    pub inner: Arc<Puzzle>,
    planted: Option<Board>,
}

impl PyPuzzle {
    pub fn new(p: Puzzle) -> Self {
        PyPuzzle { inner: Arc::new(p), planted: None }
    }
}

/// A board's placements all name a piece of `puzzle` and a turn (what the drawings and the
/// viewer link need), and it has a cell per cell.
pub fn in_range(puzzle: &Puzzle, board: &Board) -> bool {
    board.cells.len() == puzzle.cells() && board.cells.iter().all(|p| (p.piece as usize) < puzzle.cells() && p.rot < 4)
}

/// The board's size from its pieces: as given, or from the one given and the count, or from
/// the counts of edge pieces (one grey side) and of all pieces, the wider side first.
fn shape_of(pieces: &[Piece], width: Option<usize>, height: Option<usize>) -> PyResult<(usize, usize)> {
    let n = pieces.len();
    let from_one = |given: usize, name: &str| {
        if given == 0 || !n.is_multiple_of(given) {
            Err(input(format!("{n} pieces do not fill a board with {name} {given}")))
        } else {
            Ok(n / given)
        }
    };
    match (width, height) {
        (Some(w), Some(h)) => return Ok((w, h)),
        (Some(w), None) => return Ok((w, from_one(w, "width")?)),
        (None, Some(h)) => return Ok((from_one(h, "height")?, h)),
        (None, None) => {}
    }
    let edges = pieces.iter().filter(|p| p.iter().filter(|&&c| c == 0).count() == 1).count();
    // W + H = edges / 2 + 4 and W H = n.
    let sum = edges / 2 + 4;
    let disc = (sum * sum).checked_sub(4 * n);
    if edges.is_multiple_of(2)
        && let Some(d) = disc
    {
        let r = d.isqrt();
        if r * r == d && (sum + r).is_multiple_of(2) {
            let (w, h) = ((sum + r) / 2, (sum - r) / 2);
            if w * h == n && h >= 2 {
                return Ok((w, h));
            }
        }
    }
    Err(input(format!(
        "cannot tell the board's shape from {n} pieces with {edges} edge pieces; give width= and height="
    )))
}

#[pymethods]
impl PyPuzzle {
    /// Reads a puzzle file: Brendan Owen's text (a ``W H`` line, then one line
    /// ``up right down left`` per piece) or the JSON of eternity2.dev (with hints), detected
    /// from the content. A file that does not read raises :class:`OSError`; one that is not a
    /// valid puzzle raises :class:`concur.InputError`.
    #[staticmethod]
    fn read(path: PathBuf) -> PyResult<Self> {
        let bytes = std::fs::read(&path)?;
        let p = format::read_puzzle(&bytes).map_err(|e| input(format!("{}: {e}", path.display())))?;
        Ok(Self::new(p))
    }

    /// Reads a puzzle from its text (``str`` or ``bytes``), in either format of
    /// :meth:`Puzzle.read`.
    #[staticmethod]
    fn parse(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes: Vec<u8> = if let Ok(s) = data.cast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else if let Ok(b) = data.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            return Err(input(format!("a puzzle's text is str or bytes, not {}", data.get_type().name()?)));
        };
        Ok(Self::new(format::read_puzzle(&bytes).map_err(input)?))
    }

    /// Generates a puzzle with a planted solution (kept as :attr:`planted`), in the manner of
    /// Brendan Owen's sets: ``frame_colors`` colours on the frame joins and ``inner_colors``
    /// on the others (default: his counts for the size). The same arguments give the same
    /// puzzle. With ``unique=True`` it draws until a complete count proves exactly one
    /// solution up to turning the board (``unique_attempts`` draws of at most
    /// ``unique_nodes`` nodes each; :class:`concur.ConcurError` if none is proven). Ctrl-C
    /// stops the draws.
    #[staticmethod]
    #[pyo3(signature = (width, height, *, frame_colors=None, inner_colors=None, seed=0, unique=false, unique_attempts=200, unique_nodes=2_000_000))]
    #[allow(clippy::too_many_arguments, reason = "the generator's keyword arguments")]
    fn generate(
        py: Python<'_>,
        width: usize,
        height: usize,
        frame_colors: Option<usize>,
        inner_colors: Option<usize>,
        seed: u64,
        unique: bool,
        unique_attempts: u64,
        unique_nodes: u64,
    ) -> PyResult<Self> {
        let opts = GenerateOptions { width, height, frame_colors, inner_colors, seed };
        if !unique {
            let (p, planted) = generate(&opts).map_err(input)?;
            return Ok(PyPuzzle { inner: Arc::new(p), planted: Some(planted) });
        }
        let cancel = Cancel::new();
        let watch = Watch::cancel(&cancel);
        let drawn = blocking(py, &cancel, || generate_unique_checked(&opts, unique_attempts, unique_nodes, &watch))?;
        match drawn {
            Ok(Some(u)) => Ok(PyPuzzle { inner: Arc::new(u.puzzle), planted: Some(u.solution) }),
            Ok(None) => Err(error(
                Kind::Concur,
                format!(
                    "none of {unique_attempts} draws was proven unique within {unique_nodes} nodes each; \
                     try more colours, unique_attempts or unique_nodes"
                ),
            )),
            Err(UniqueError::Generate(e)) => Err(input(e)),
            Err(UniqueError::Memory(e)) => Err(limit(&e)),
        }
    }

    /// A puzzle from its pieces: ``pieces`` an array (pieces, 4) of colours up, right, down,
    /// left (0 is grey), in piece order; ``hints`` a list of ``(cell, piece, rot)`` or an
    /// (n, 3) array (cell row-major from the top-left, piece 0-based, rot clockwise quarter
    /// turns). The board's size is ``width`` x ``height`` when given, else the one the
    /// pieces fit (the wider side as the width).
    #[staticmethod]
    #[pyo3(signature = (pieces, hints=None, *, width=None, height=None))]
    fn from_pieces(
        pieces: &Bound<'_, PyAny>,
        hints: Option<&Bound<'_, PyAny>>,
        width: Option<usize>,
        height: Option<usize>,
    ) -> PyResult<Self> {
        let rows = int_rows::<4>(pieces, "pieces")?;
        if rows.is_empty() {
            return Err(input("a puzzle needs pieces"));
        }
        let mut ps: Vec<Piece> = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            let mut p = [0u8; 4];
            for (c, &v) in p.iter_mut().zip(r) {
                *c = u8::try_from(v).map_err(|_| input(format!("piece {i} has colour {v}; colours are 0..63")))?;
            }
            ps.push(p);
        }
        if let Some(i) = ps.iter().position(|p| piece_class(*p).is_none()) {
            return Err(input(format!("piece {i} {:?} has grey (0) on sides no cell has on its rim", ps[i])));
        }
        let (w, h) = shape_of(&ps, width, height)?;
        let mut hs = Vec::new();
        if let Some(hints) = hints {
            for [cell, piece, rot] in int_rows::<3>(hints, "hints")? {
                let (Ok(cell), Ok(piece), Ok(rot)) = (usize::try_from(cell), usize::try_from(piece), u8::try_from(rot))
                else {
                    return Err(input(format!("hint ({cell}, {piece}, {rot}) is out of range")));
                };
                hs.push(Hint { cell, piece, rot });
            }
        }
        Ok(Self::new(Puzzle::new(w, h, ps, hs).map_err(input)?))
    }

    /// The pieces, a numpy array (pieces, 4) of colours up, right, down, left.
    #[getter]
    fn pieces<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i64>> {
        let v: Vec<i64> = self.inner.pieces().iter().flat_map(|p| p.map(i64::from)).collect();
        matrix(py, v, self.inner.cells(), 4)
    }

    /// The hints, a numpy array (hints, 3) of cell, piece and clockwise turns.
    #[getter]
    fn hints<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i64>> {
        let h = self.inner.hints();
        let v: Vec<i64> = h.iter().flat_map(|h| [h.cell as i64, h.piece as i64, i64::from(h.rot)]).collect();
        matrix(py, v, h.len(), 3)
    }

    /// Columns of the board.
    #[getter]
    fn width(&self) -> usize {
        self.inner.width()
    }

    /// Rows of the board.
    #[getter]
    fn height(&self) -> usize {
        self.inner.height()
    }

    /// Cells (and pieces): ``width * height``.
    #[getter]
    fn cells(&self) -> usize {
        self.inner.cells()
    }

    /// Colours, grey included (K: the largest colour + 1), as in a certificate.
    #[getter]
    fn colors(&self) -> usize {
        self.inner.num_colors()
    }

    /// Interior joins, the score of a solution: ``2 W H - W - H``.
    #[getter]
    fn max_score(&self) -> usize {
        self.inner.max_score()
    }

    /// The planted solution of a generated puzzle (a board, numpy (cells, 2)), else None.
    #[getter]
    fn planted<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray2<i64>>> {
        self.planted.as_ref().map(|b| board_array(py, b))
    }

    /// The puzzle in Brendan Owen's text, or as JSON when it has hints (what :meth:`write`
    /// writes).
    fn to_text(&self) -> String {
        format::write_puzzle(&self.inner)
    }

    /// Writes the puzzle to ``path`` (see :meth:`to_text`).
    fn write(&self, path: PathBuf) -> PyResult<()> {
        std::fs::write(&path, format::write_puzzle(&self.inner))?;
        Ok(())
    }

    /// The matched interior joins of ``board`` (an array (cells, 2), or a result or solution);
    /// 0 for a board that is not one of this puzzle's.
    fn score(&self, board: &Bound<'_, PyAny>) -> PyResult<usize> {
        let b = board_of(&self.inner, board)?;
        Ok(if in_range(&self.inner, &b) { self.inner.score(&b) } else { 0 })
    }

    /// ``board`` as a link to the community's board viewer (e2.bucas.name), or None when the
    /// puzzle has more than 26 colours or the board is not one of this puzzle's.
    fn viewer_link(&self, board: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let b = board_of(&self.inner, board)?;
        Ok(if in_range(&self.inner, &b) { format::viewer_link(&self.inner, &b) } else { None })
    }

    fn __repr__(&self) -> String {
        let p = &self.inner;
        let hints = if p.hints().is_empty() { String::new() } else { format!(", {} hints", p.hints().len()) };
        format!("Puzzle({}x{}, {} colours{hints})", p.width(), p.height(), p.num_colors() - 1)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyPuzzle>().is_ok_and(|o| *o.get().inner == *self.inner)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format::write_puzzle(&self.inner).hash(&mut h);
        h.finish()
    }

    /// Pickling: the puzzle's text (the planted solution is not kept).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        Ok((slf.get_type().getattr("parse")?, (format::write_puzzle(&slf.get().inner),)))
    }
}
