//! Character operations shared by the interpreter and the JIT's runtime
//! helpers, so that both give the same results.

/// Fortran INDEX(string, substring): the 1-based position of the first
/// occurrence of `needle` in `hay`, 0 when there is none, 1 when `needle`
/// is empty.
pub fn index(hay: &[u8], needle: &[u8]) -> i64 {
    if needle.is_empty() {
        return 1;
    }
    hay.windows(needle.len())
        .position(|w| w == needle)
        .map_or(0, |p| p as i64 + 1)
}

#[cfg(test)]
mod tests {
    use super::index;

    #[test]
    fn index_finds_the_first_occurrence() {
        assert_eq!(index(b"CONVERGENCE: NORM", b"NORM"), 14);
        assert_eq!(index(b"abab", b"ab"), 1);
        assert_eq!(index(b"abc", b"abcd"), 0);
        assert_eq!(index(b"abc", b""), 1);
        assert_eq!(index(b"", b"a"), 0);
    }
}
