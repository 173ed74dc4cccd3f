//! File formats, detected from the content (ARCHITECTURE.md §3).
//!
//! - Brendan Owen's puzzle text: a `W H` line, then `W*H` lines `up right down left`.
//! - A header-less list of `W*W` pieces (four colours a line, as in the official 256-piece
//!   file): the board is taken as square.
//! - eternity2.dev JSON: `width`, `height`, `pieces` as `[up,right,down,left]`, optional
//!   `numColors` and `hints` `{pos, piece, rot}` (pos row-major from the top-left).
//! - Brendan Owen's solution text: a `W H` line, then line `i` is `x y r` for piece `i`, with
//!   the origin at the bottom-left, y pointing up and `r` clockwise quarter turns.
//! - A board as a link to the community's viewer (e2.bucas.name):
//!   `#puzzle=NAME&board_w=W&board_h=H&board_edges=EDGES&motifs_order=jblackwood`, EDGES four
//!   letters a cell (up, right, down, left), row-major from the top-left, `a` for grey and
//!   `a + c` for colour `c`. Read as a solution, each cell's edges are matched to an unused
//!   piece and its turn.

use super::{Board, Hint, Piece, Placement, Puzzle, check_size};
use crate::error::{Error, Result};

/// What a file holds, judged from its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Brendan Owen's puzzle text: a `W H` line, then four colours a line.
    PuzzleText,
    /// An eternity2.dev JSON puzzle.
    PuzzleJson,
    /// Four colours a line without a header: a square board's pieces.
    PieceList,
    /// Brendan Owen's solution text: a `W H` line, then `x y r` a line.
    Solution,
    /// A link to a board in the community's viewer.
    ViewerLink,
}

/// Decodes bytes as UTF-8 text, rejecting binary data with a clear message.
pub fn text_of(bytes: &[u8]) -> Result<&str> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(Error::format("the file is empty"));
    }
    if bytes.contains(&0) {
        return Err(Error::format("the file holds binary data, not a puzzle or solution"));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        Error::format(format!(
            "the file is not text (invalid UTF-8 at byte {}): not a puzzle or solution",
            e.valid_up_to()
        ))
    })
}

/// Numbered, comment-stripped, non-blank lines split into tokens.
fn lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("");
        let toks: Vec<&str> = l.split_whitespace().collect();
        (!toks.is_empty()).then_some((i + 1, toks))
    })
}

fn number(line: usize, tok: &str, what: &str, max: u64) -> Result<u64> {
    let v: i128 =
        tok.parse().map_err(|_| Error::parse(line, format!("expected {what} (a number), found `{}`", clip(tok))))?;
    if v < 0 || v > max as i128 {
        return Err(Error::parse(line, format!("{what} {v} is out of range 0..={max}")));
    }
    Ok(v as u64)
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(24).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out.escape_debug().to_string()
}

/// Classifies a text by its content.
pub fn detect(text: &str) -> Result<Kind> {
    let first = text.trim_start();
    if first.starts_with('{') {
        return Ok(Kind::PuzzleJson);
    }
    if first.starts_with("http") || (first.starts_with('#') && first.contains("board_edges=")) {
        return Ok(Kind::ViewerLink);
    }
    let mut it = lines(text);
    let Some((l1, head)) = it.next() else {
        return Err(Error::format("the file is empty"));
    };
    match head.len() {
        2 => match it.next() {
            Some((_, t)) if t.len() == 4 => Ok(Kind::PuzzleText),
            Some((_, t)) if t.len() == 3 => Ok(Kind::Solution),
            Some((l, t)) => Err(Error::parse(
                l,
                format!("expected 4 colours (a piece) or `x y r` (a solution), found {} fields", t.len()),
            )),
            None => Err(Error::parse(l1, "a `W H` header and nothing after it")),
        },
        4 => Ok(Kind::PieceList),
        n => Err(Error::parse(l1, format!("expected a `W H` header line (or `{{` for JSON), found {n} fields"))),
    }
}

/// Reads a puzzle in any supported format.
pub fn parse_puzzle(text: &str) -> Result<Puzzle> {
    match detect(text)? {
        Kind::PuzzleJson => parse_json(text),
        Kind::PuzzleText => parse_text(text, true),
        Kind::PieceList => parse_text(text, false),
        Kind::Solution => Err(Error::format("this is a solution file (`x y r` lines), expected a puzzle")),
        Kind::ViewerLink => Err(Error::format("this is a link to a board, expected a puzzle")),
    }
}

/// Reads a puzzle from raw bytes (binary data is rejected, not panicked on).
pub fn read_puzzle(bytes: &[u8]) -> Result<Puzzle> {
    parse_puzzle(text_of(bytes)?)
}

fn parse_text(text: &str, header: bool) -> Result<Puzzle> {
    let mut it = lines(text).peekable();
    let (w, h, first_line) = if header {
        let (l, t) = it.next().expect("detect saw a header");
        let w = number(l, t[0], "width", u32::MAX as u64)? as usize;
        let h = number(l, t[1], "height", u32::MAX as u64)? as usize;
        check_size(w, h).map_err(|e| Error::parse(l, e.to_string()))?;
        (w, h, l)
    } else {
        (0, 0, 0)
    };
    let limit = if header { w * h } else { super::MAX_CELLS };
    let mut pieces: Vec<Piece> = Vec::with_capacity(limit.min(4096));
    for (l, t) in it {
        if t.len() != 4 {
            return Err(Error::parse(l, format!("expected 4 colours, found {} fields", t.len())));
        }
        if pieces.len() == limit {
            return Err(Error::parse(l, format!("more than the {limit} pieces the board holds")));
        }
        let mut p = [0u8; 4];
        for s in 0..4 {
            p[s] = number(l, t[s], "colour", (super::MAX_COLORS - 1) as u64)? as u8;
        }
        pieces.push(p);
    }
    let (w, h) = if header {
        (w, h)
    } else {
        let n = pieces.len();
        let side = (n as f64).sqrt().round() as usize;
        if side * side != n {
            return Err(Error::puzzle(format!(
                "a list of {n} pieces without a `W H` header: only square boards can be inferred"
            )));
        }
        (side, side)
    };
    if pieces.len() != w * h {
        return Err(Error::parse(
            first_line,
            format!("a {w}x{h} board needs {} pieces, the file has {}", w * h, pieces.len()),
        ));
    }
    Puzzle::new(w, h, pieces, vec![])
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonPuzzle {
    width: u64,
    height: u64,
    #[serde(default)]
    num_colors: Option<u64>,
    pieces: Vec<Vec<i64>>,
    #[serde(default)]
    hints: Vec<JsonHint>,
}

#[derive(serde::Deserialize, serde::Serialize)]
struct JsonHint {
    pos: i64,
    piece: i64,
    rot: i64,
}

fn parse_json(text: &str) -> Result<Puzzle> {
    let j: JsonPuzzle =
        serde_json::from_str(text).map_err(|e| Error::parse(e.line(), format!("bad puzzle JSON: {e}")))?;
    let (w, h) = (j.width.min(u32::MAX as u64) as usize, j.height.min(u32::MAX as u64) as usize);
    check_size(w, h)?;
    let max_color = j.num_colors.unwrap_or(super::MAX_COLORS as u64 - 1).min(super::MAX_COLORS as u64 - 1);
    let mut pieces = Vec::with_capacity(j.pieces.len().min(super::MAX_CELLS));
    for (i, p) in j.pieces.iter().enumerate() {
        if p.len() != 4 {
            return Err(Error::puzzle(format!("piece {i} has {} colours, expected 4", p.len())));
        }
        let mut q = [0u8; 4];
        for s in 0..4 {
            if p[s] < 0 || p[s] as u64 > max_color {
                return Err(Error::puzzle(format!("piece {i} has colour {} out of range 0..={max_color}", p[s])));
            }
            q[s] = p[s] as u8;
        }
        pieces.push(q);
    }
    let n = (w * h) as i64;
    let mut hints = Vec::with_capacity(j.hints.len());
    for hnt in &j.hints {
        if !(0..n).contains(&hnt.pos) || !(0..n).contains(&hnt.piece) || !(0..4).contains(&hnt.rot) {
            return Err(Error::puzzle(format!(
                "hint {{pos: {}, piece: {}, rot: {}}} is out of range (pos and piece 0..{n}, rot 0..4)",
                hnt.pos, hnt.piece, hnt.rot
            )));
        }
        hints.push(Hint { cell: hnt.pos as usize, piece: hnt.piece as usize, rot: hnt.rot as u8 });
    }
    Puzzle::new(w, h, pieces, hints)
}

/// Brendan Owen's puzzle text. Hints cannot be expressed there: use [`write_puzzle_json`].
pub fn write_puzzle_text(p: &Puzzle) -> String {
    let mut s = format!("{} {}\n", p.width(), p.height());
    for q in p.pieces() {
        s.push_str(&format!("{} {} {} {}\n", q[0], q[1], q[2], q[3]));
    }
    s
}

/// eternity2.dev-style JSON, hints included.
pub fn write_puzzle_json(p: &Puzzle) -> String {
    let hints: Vec<JsonHint> =
        p.hints().iter().map(|h| JsonHint { pos: h.cell as i64, piece: h.piece as i64, rot: h.rot as i64 }).collect();
    let v = serde_json::json!({
        "width": p.width(),
        "height": p.height(),
        "numColors": p.num_colors() - 1,
        "pieces": p.pieces(),
        "hints": hints,
        "maxScore": p.max_score(),
    });
    serde_json::to_string_pretty(&v).expect("plain JSON") + "\n"
}

/// Writes the puzzle in the text format when it has no hints, else as JSON.
pub fn write_puzzle(p: &Puzzle) -> String {
    if p.hints().is_empty() { write_puzzle_text(p) } else { write_puzzle_json(p) }
}

/// Reads a solution in Brendan Owen's format for `puzzle`.
pub fn parse_solution(text: &str, puzzle: &Puzzle) -> Result<Board> {
    match detect(text)? {
        Kind::Solution => {}
        Kind::ViewerLink => return parse_viewer_link(text.trim(), puzzle),
        Kind::PuzzleJson | Kind::PuzzleText | Kind::PieceList => {
            return Err(Error::format("this is a puzzle file, expected a solution (`x y r` lines)"));
        }
    }
    let (w, h) = (puzzle.width(), puzzle.height());
    let mut it = lines(text);
    let (l, t) = it.next().expect("detect saw a header");
    let fw = number(l, t[0], "width", u32::MAX as u64)? as usize;
    let fh = number(l, t[1], "height", u32::MAX as u64)? as usize;
    if (fw, fh) != (w, h) {
        return Err(Error::parse(l, format!("solution is for a {fw}x{fh} board, the puzzle is {w}x{h}")));
    }
    let n = w * h;
    let mut cells: Vec<Option<Placement>> = vec![None; n];
    let mut count = 0usize;
    for (l, t) in it {
        if t.len() != 3 {
            return Err(Error::parse(l, format!("expected `x y r`, found {} fields", t.len())));
        }
        if count == n {
            return Err(Error::parse(l, format!("more than {n} placements")));
        }
        let x = number(l, t[0], "x", (w - 1) as u64)? as usize;
        let y = number(l, t[1], "y", (h - 1) as u64)? as usize;
        let r = number(l, t[2], "rotation", 3)? as u8;
        let cell = (h - 1 - y) * w + x;
        if cells[cell].is_some() {
            return Err(Error::parse(l, format!("two pieces placed at x={x} y={y}")));
        }
        cells[cell] = Some(Placement { piece: count as u16, rot: r });
        count += 1;
    }
    if count != n {
        return Err(Error::solution(format!("solution places {count} pieces, the board has {n}")));
    }
    Ok(Board { width: w, height: h, cells: cells.into_iter().map(|c| c.expect("all placed")).collect() })
}

/// The viewer that [`viewer_link`] links to.
pub const VIEWER: &str = "https://e2.bucas.name/#";

/// The board as a link to the community's viewer (the format above), or `None` when the
/// puzzle has more colours than letters (26 with grey).
pub fn viewer_link(puzzle: &Puzzle, board: &Board) -> Option<String> {
    if puzzle.num_colors() > 26 || board.cells.len() != puzzle.cells() {
        return None;
    }
    let mut edges = String::with_capacity(4 * board.cells.len());
    for &pl in &board.cells {
        for s in 0..4 {
            edges.push(char::from(b'a' + puzzle.color(pl, s)));
        }
    }
    Some(format!(
        "{VIEWER}puzzle=concur&board_w={}&board_h={}&board_edges={edges}&motifs_order=jblackwood",
        board.width, board.height
    ))
}

/// Reads a viewer link (the format above, or eternity2.dev's viewer with `puzzle_size` for a
/// square board and the same `board_edges`) as a board of `puzzle`: every cell's four edges
/// must be shown by some piece in some turn, each piece used once. Identical pieces are
/// interchangeable, so taking any unused match is exact.
pub fn parse_viewer_link(link: &str, puzzle: &Puzzle) -> Result<Board> {
    let w = puzzle.width();
    let cells = parse_partial_viewer_link(link, puzzle)?;
    if let Some(c) = cells.iter().position(Option::is_none) {
        return Err(Error::solution(format!(
            "cell {c} (row {}, column {}) is empty: a partial board, not a solution",
            c / w + 1,
            c % w + 1
        )));
    }
    Ok(Board { width: w, height: puzzle.height(), cells: cells.into_iter().flatten().collect() })
}

/// Reads a viewer link that may show empty cells (all four edges `a`, as eternity2.dev's
/// engines show the open cells of a partial board) as a partial board of `puzzle`: `None`
/// where the cell is empty; every other cell as [`parse_viewer_link`] reads it.
pub fn parse_partial_viewer_link(link: &str, puzzle: &Puzzle) -> Result<Vec<Option<Placement>>> {
    let frag = link.split_once('#').or_else(|| link.split_once('?')).map_or(link, |(_, f)| f);
    let param =
        |key: &str| frag.split('&').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v.trim()));
    let dim = |key: &str| -> Result<usize> {
        // eternity2.dev's viewer gives one `puzzle_size` for a square board.
        let v = param(key)
            .or_else(|| param("puzzle_size"))
            .ok_or_else(|| Error::solution(format!("the link has no {key}")))?;
        v.parse().map_err(|_| Error::solution(format!("the link's {key} is not a number: `{}`", clip(v))))
    };
    let (w, h) = (dim("board_w")?, dim("board_h")?);
    if (w, h) != (puzzle.width(), puzzle.height()) {
        return Err(Error::solution(format!(
            "the link shows a {w}x{h} board, the puzzle is {}x{}",
            puzzle.width(),
            puzzle.height()
        )));
    }
    let edges = param("board_edges").ok_or_else(|| Error::solution("the link has no board_edges"))?;
    let n = w * h;
    if edges.len() != 4 * n || !edges.bytes().all(|b| b.is_ascii_lowercase()) {
        return Err(Error::solution(format!(
            "board_edges must be {} letters a-z (four a cell), found {} characters",
            4 * n,
            edges.chars().count()
        )));
    }
    // Unused pieces by their turn-independent form, lowest number on top.
    let mut unused: std::collections::HashMap<Piece, Vec<u16>> = std::collections::HashMap::new();
    for (i, &p) in puzzle.pieces().iter().enumerate().rev() {
        unused.entry(super::canonical(p)).or_default().push(i as u16);
    }
    let e = edges.as_bytes();
    let mut cells = Vec::with_capacity(n);
    for c in 0..n {
        let q: Piece = [e[4 * c] - b'a', e[4 * c + 1] - b'a', e[4 * c + 2] - b'a', e[4 * c + 3] - b'a'];
        if q == [0; 4] && !unused.contains_key(&[0; 4]) {
            cells.push(None);
            continue;
        }
        let piece = unused.get_mut(&super::canonical(q)).and_then(|v| v.pop()).ok_or_else(|| {
            Error::solution(format!(
                "cell {c} (row {}, column {}) shows edges {q:?}, which no unused piece has",
                c / w + 1,
                c % w + 1
            ))
        })?;
        let p = puzzle.pieces()[piece as usize];
        let rot = (0..4u8).find(|&r| super::rotated(p, r) == q).expect("same canonical form");
        cells.push(Some(Placement { piece, rot }));
    }
    Ok(cells)
}

/// Reads a solution from raw bytes.
pub fn read_solution(bytes: &[u8], puzzle: &Puzzle) -> Result<Board> {
    parse_solution(text_of(bytes)?, puzzle)
}

/// Writes a board in Brendan Owen's solution format. A board that does not use every piece
/// exactly once cannot be expressed in it and is an error.
pub fn write_solution(board: &Board) -> Result<String> {
    let (w, h) = (board.width, board.height);
    let n = w.saturating_mul(h);
    if board.cells.len() != n {
        return Err(Error::solution(format!("a {w}x{h} board has {n} cells, this one holds {}", board.cells.len())));
    }
    let mut at: Vec<Option<(usize, usize, u8)>> = vec![None; n];
    for (c, pl) in board.cells.iter().enumerate() {
        let p = pl.piece as usize;
        if p >= n || at[p].is_some() {
            return Err(Error::solution(format!("board uses piece {p} twice or out of range")));
        }
        at[p] = Some((c % w, h - 1 - c / w, pl.rot));
    }
    let mut s = format!("{w} {h}\n");
    // n cells, each a distinct piece below n: every piece is placed once.
    for (x, y, r) in at.into_iter().map(|a| a.expect("n distinct pieces of n fill every slot")) {
        s.push_str(&format!("{x} {y} {r}\n"));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P2: &str = "2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n3 0 0 4\n";

    #[test]
    fn viewer_links_read_back_to_boards_with_the_same_score() {
        use crate::puzzle::generate::{GenerateOptions, generate};
        use rand::seq::SliceRandom;
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        for (w, h, seed) in [(3, 3, 1), (5, 4, 2), (8, 8, 3), (16, 16, 4)] {
            let opts = GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed };
            let (p, solution) = generate(&opts).unwrap();
            // The planted solution, and a shuffled board of random turns.
            let mut perm: Vec<u16> = (0..p.cells() as u16).collect();
            perm.shuffle(&mut rng);
            let cells = perm.iter().map(|&piece| Placement { piece, rot: rng.random_range(0..4) }).collect();
            for board in [solution, Board { width: w, height: h, cells }] {
                let link = viewer_link(&p, &board).unwrap();
                assert!(
                    link.starts_with("https://e2.bucas.name/#puzzle=") && link.ends_with("&motifs_order=jblackwood")
                );
                assert!(link.contains(&format!("board_w={w}&board_h={h}&board_edges=")));
                let back = parse_solution(&link, &p).unwrap();
                // The same picture, so the same score (pieces may swap with identical twins).
                assert_eq!(viewer_link(&p, &back).unwrap(), link);
                let (a, b) = (crate::verify::check(&p, &board), crate::verify::check(&p, &back));
                assert_eq!((a.score, a.valid), (b.score, b.valid));
                assert_eq!(p.score(&back), p.score(&board));
            }
        }
        // Hand-made: the 2x2 puzzle solved, cell by cell up, right, down, left.
        let pz = parse_puzzle(P2).unwrap();
        let link =
            "https://e2.bucas.name/#puzzle=x&board_w=2&board_h=2&board_edges=abcaaadbceaadaae&motifs_order=jblackwood";
        let b = parse_solution(link, &pz).unwrap();
        assert_eq!(
            viewer_link(&pz, &b).unwrap().split("board_edges=").nth(1).unwrap(),
            "abcaaadbceaadaae&motifs_order=jblackwood"
        );
        assert!(crate::verify::check(&pz, &b).valid);
    }

    #[test]
    fn bad_viewer_links_are_clear_errors() {
        let pz = parse_puzzle(P2).unwrap();
        let base = "https://e2.bucas.name/#puzzle=x&board_w=2&board_h=2&board_edges=";
        for (link, says) in [
            (format!("{base}acda"), "16 letters"),
            (format!("{base}acdaaabdcbaaeaaA"), "16 letters"),
            ("https://e2.bucas.name/#board_h=2&board_edges=aaaa".to_string(), "board_w"),
            ("https://e2.bucas.name/#puzzle=x&board_w=3&board_h=2&board_edges=a".to_string(), "3x2"),
            (format!("{base}acdaacdaacdaacda"), "no unused piece"),
            (format!("{base}zzzzaabdcbaaeaaa"), "no unused piece"),
        ] {
            let e = parse_solution(&link, &pz).unwrap_err().to_string();
            assert!(e.contains(says), "{link}: {e}");
        }
        assert!(parse_puzzle(&format!("{base}abcaaadbceaadaae")).is_err());
    }

    #[test]
    fn detects_by_content() {
        assert_eq!(detect(P2).unwrap(), Kind::PuzzleText);
        assert_eq!(detect("2 2\n0 0 0\n").unwrap(), Kind::Solution);
        assert_eq!(detect(" {\"width\": 2}").unwrap(), Kind::PuzzleJson);
        assert_eq!(detect("0 1 2 0\n").unwrap(), Kind::PieceList);
    }

    #[test]
    fn solution_round_trip_uses_bottom_left_origin() {
        let pz = parse_puzzle(P2).unwrap();
        // Piece 0 at the top-left: x=0, y=1.
        let sol = "2 2\n0 1 0\n1 1 0\n0 0 0\n1 0 0\n";
        let b = parse_solution(sol, &pz).unwrap();
        assert_eq!(b.cells[0], Placement { piece: 0, rot: 0 });
        assert_eq!(b.cells[2], Placement { piece: 2, rot: 0 });
        assert_eq!(write_solution(&b).unwrap(), sol);
        assert_eq!(pz.score(&b), 4);
        // A board that is not a permutation of its pieces, or holds the wrong number of
        // cells, is a typed error, not a panic.
        let mut short = b.clone();
        short.cells.pop();
        assert!(matches!(write_solution(&short), Err(Error::Solution { .. })));
        let mut twice = b.clone();
        twice.cells[1] = twice.cells[0];
        assert!(matches!(write_solution(&twice), Err(Error::Solution { .. })));
        assert!(matches!(parse_puzzle(sol), Err(Error::Format { .. })));
    }

    #[test]
    fn json_round_trip_keeps_hints() {
        let pz = parse_puzzle(P2).unwrap();
        let with_hint = Puzzle::new(2, 2, pz.pieces().to_vec(), vec![Hint { cell: 0, piece: 0, rot: 0 }]).unwrap();
        let back = parse_puzzle(&write_puzzle(&with_hint)).unwrap();
        assert_eq!(back, with_hint);
        assert_eq!(parse_puzzle(&write_puzzle(&pz)).unwrap(), pz);
    }

    #[test]
    fn bad_inputs_are_errors() {
        for bad in [
            "",
            "   \n",
            "2 2\n0 1 2 0\n",
            "2 2\n0 1 2 x\n0 0 3 1\n2 4 0 0\n3 0 0 4\n",
            "2 2\n0 1 2 999\n0 0 3 1\n2 4 0 0\n3 0 0 4\n",
            "1000000000 1000000000\n0 0 0 0\n",
            "{\"width\": 2, \"height\": 2, \"pieces\": [[0,1,2,0],[0,0,3,1],[2,4,0,0],[3,0,0,4]], \"hints\": [{\"pos\": 9, \"piece\": 0, \"rot\": 0}]}",
            "{\"width\": 2,",
        ] {
            assert!(parse_puzzle(bad).is_err(), "accepted {bad:?}");
        }
        assert!(read_puzzle(&[0xff, 0xfe, 0x00, 0x12]).is_err());
    }
}
