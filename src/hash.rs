//! The one hash of the engine: 64-bit FNV-1a (Fowler, Noll and Vo), for cycle detection in
//! the maps' batch drivers, journal and puzzle fingerprints, and seeds derived from names.
//! Not cryptographic; stable across platforms and versions (journals on disk depend on it).
//! Below every other module.

/// FNV-1a's 64-bit offset basis: the hash of no bytes.
pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime, the multiplier of every step.
pub const PRIME: u64 = 0x100_0000_01b3;

/// A running FNV-1a hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(pub u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(OFFSET)
    }
}

impl Fnv1a {
    /// A hash of no bytes yet ([`OFFSET`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// The standard byte-wise step, over every byte.
    #[inline]
    pub fn bytes(self, bytes: &[u8]) -> Self {
        Fnv1a(bytes.iter().fold(self.0, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME)))
    }

    /// A word-wise step: one xor-multiply per 64-bit word (the maps hash their state this
    /// way, one float at a time, eight times faster than byte by byte).
    #[inline]
    pub fn word(self, v: u64) -> Self {
        Fnv1a((self.0 ^ v).wrapping_mul(PRIME))
    }

    /// Word-wise over the bit patterns of floats.
    #[inline]
    pub fn f32s(self, x: &[f32]) -> Self {
        x.iter().fold(self, |h, v| h.word(u64::from(v.to_bits())))
    }

    /// Word-wise over integers.
    #[inline]
    pub fn u32s(self, x: &[u32]) -> Self {
        x.iter().fold(self, |h, &v| h.word(u64::from(v)))
    }

    /// The hash of everything fed in.
    pub fn finish(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_wise_matches_the_published_test_vectors() {
        // FNV-1a 64 of "" and "a" and "foobar" (the reference test suite).
        assert_eq!(Fnv1a::new().bytes(b"").finish(), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv1a::new().bytes(b"a").finish(), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv1a::new().bytes(b"foobar").finish(), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn word_wise_is_one_step_per_word() {
        let x = [1.5f32, -0.0, 3.25];
        let mut h = OFFSET;
        for v in x {
            h = (h ^ v.to_bits() as u64).wrapping_mul(PRIME);
        }
        assert_eq!(Fnv1a::new().f32s(&x).finish(), h);
        assert_eq!(Fnv1a::new().u32s(&[7, 9]).finish(), Fnv1a::new().word(7).word(9).finish());
    }
}
