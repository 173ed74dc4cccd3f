//! Seeding: every random choice of a run flows from its seed, and trial `t` draws from a
//! stream derived from `(seed, t)`, so runs are reproducible and any trial can be replayed
//! alone. Below every engine (maps, searches, generators) that seeds trials or attempts.

/// Derives the seed of trial `t` from the run seed (splitmix64 of both, after Steele, Lea and
/// Flood's SplitMix), so any trial can be replayed alone.
pub fn trial_seed(seed: u64, t: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    mix(seed ^ mix(t.wrapping_add(1)))
}
