//! How the report writes its numbers: seconds and work, shared by its tables (the per-size
//! table, the machines' pooling, the hardness answer).

/// Seconds with about three significant digits.
pub fn fmt_secs(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&v) {
        format!("{v:.2e}")
    } else {
        let decimals = (2 - v.log10().floor() as i32).max(0) as usize;
        format!("{v:.decimals$}")
    }
}

/// Work: whole numbers, in exponent form from a million.
pub fn fmt_work(v: f64) -> String {
    if v >= 1e6 { format!("{v:.2e}") } else { format!("{v:.0}") }
}
