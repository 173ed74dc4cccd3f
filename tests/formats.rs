//! Formats and the exact verifier against Brendan Owen's planted solutions.
use crate::common::puzzles;
use concur::puzzle::{Board, Puzzle, format};
use concur::verify;

/// An independent scorer written straight from the format description: colours in URDL
/// order, rotation r clockwise means side d shows stored side (d - r) mod 4.
fn naive_score(p: &Puzzle, b: &Board) -> usize {
    let col = |c: usize, d: usize| {
        let pl = b.cells[c];
        p.pieces()[pl.piece as usize][(d + 4 - pl.rot as usize) % 4]
    };
    let (w, h) = (p.width(), p.height());
    let mut s = 0;
    for y in 0..h {
        for x in 0..w {
            let c = y * w + x;
            if x + 1 < w && col(c, 1) == col(c + 1, 3) {
                s += 1;
            }
            if y + 1 < h && col(c, 2) == col(c + w, 0) {
                s += 1;
            }
        }
    }
    s
}

#[test]
fn all_171_planted_solutions_verify_and_corruptions_are_caught() {
    let Some(dir) = puzzles("all_171_planted_solutions_verify") else { return };
    let mut count = 0;
    let mut entries: Vec<_> =
        std::fs::read_dir(dir.join("brendan_owen/solutions_set_1")).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for sol_path in entries {
        let name = sol_path.file_name().unwrap().to_str().unwrap().replace("solutions_", "pieces_");
        let p =
            format::read_puzzle(&std::fs::read(dir.join("brendan_owen/pieces_set_1").join(&name)).unwrap()).unwrap();
        let text = std::fs::read_to_string(&sol_path).unwrap();
        let b = format::parse_solution(&text, &p).unwrap();
        let v = verify::check(&p, &b);
        assert!(v.valid, "{name}: {:?}", v.problems);
        assert_eq!(v.score, p.max_score());
        assert_eq!(naive_score(&p, &b), p.max_score());
        // Writing the board gives back the file's lines.
        assert_eq!(
            format::write_solution(&b).unwrap().split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
        // Corrupt it: swap the pieces of two cells, and turn the corner at cell 0.
        let mut bad = b.clone();
        let (i, j) = (p.width() + 1, p.cells() - p.width() - 2);
        bad.cells.swap(i, j);
        bad.cells[0].rot = (bad.cells[0].rot + 1) % 4;
        let v = verify::check(&p, &bad);
        assert!(!v.valid, "{name}: corrupted board accepted");
        assert_eq!(v.score, naive_score(&p, &bad), "{name}");
        assert!(v.score < p.max_score());
        count += 1;
    }
    assert_eq!(count, 171);
}

#[test]
fn every_shared_puzzle_parses() {
    let Some(dir) = puzzles("every_shared_puzzle_parses") else { return };
    let mut n = 0;
    for sub in ["brendan_owen/pieces_set_1", "brendan_owen/pieces_set_2", "eternity2_dev_cc0", "eternity2_jwortmann"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if name.starts_with("LICENSE") || name == "index.json" || name.starts_with("clue") {
                continue;
            }
            let p = format::read_puzzle(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(p.cells() >= 9);
            n += 1;
        }
    }
    assert!(n > 171 * 2 + 14, "{n}");
}

#[test]
fn hints_of_the_official_set_are_read() {
    let Some(dir) = puzzles("hints_of_the_official_set_are_read") else { return };
    let p = format::read_puzzle(&std::fs::read(dir.join("eternity2_dev_cc0/e2-16x16-v00.json")).unwrap()).unwrap();
    assert_eq!((p.width(), p.height(), p.num_colors()), (16, 16, 23));
    assert_eq!(p.hints().len(), 8);
    assert!(p.hints().iter().any(|h| h.cell == 135 && h.piece == 138 && h.rot == 0));
    // A hinted cell has exactly one candidate.
    assert_eq!(p.candidates().len(135), 1);
}
