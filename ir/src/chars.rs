//! Character operations shared by the interpreter and the JIT's runtime
//! helpers, so that both give the same results.

use crate::CharSearch;

/// Fortran INDEX(string, substring): the 1-based position of the first
/// occurrence of `needle` in `hay`, 0 when there is none, 1 when `needle`
/// is empty.
pub fn index(hay: &[u8], needle: &[u8]) -> i64 {
    search(CharSearch::Index, false, hay, needle)
}

/// Fortran INDEX, SCAN or VERIFY of `hay` with the second argument `arg`
/// (the substring, or the set), from the front or, with `back`, from the
/// back: the 1-based position found, 0 when there is none. INDEX of an
/// empty substring is found at 1 (at `LEN + 1` from the back).
pub fn search(op: CharSearch, back: bool, hay: &[u8], arg: &[u8]) -> i64 {
    let found = |pos: usize| match op {
        CharSearch::Index => hay[pos..].starts_with(arg),
        CharSearch::Scan => arg.contains(&hay[pos]),
        CharSearch::Verify => !arg.contains(&hay[pos]),
    };
    let positions = match op {
        CharSearch::Index if arg.len() > hay.len() => return 0,
        CharSearch::Index => hay.len() - arg.len() + 1,
        _ => hay.len(),
    };
    let at = if back {
        (0..positions).rev().find(|&p| found(p))
    } else {
        (0..positions).find(|&p| found(p))
    };
    at.map_or(0, |p| p as i64 + 1)
}

#[cfg(test)]
mod tests {
    use super::{index, search};
    use crate::CharSearch::{Index, Scan, Verify};

    #[test]
    fn searches_agree_with_fortran() {
        // Values as gfortran gives them.
        assert_eq!(search(Verify, true, b"abc  ", b" "), 3);
        assert_eq!(search(Verify, true, b"     ", b" "), 0);
        assert_eq!(search(Verify, false, b"  x y", b" "), 3);
        assert_eq!(search(Scan, false, b"fortran", b"tr"), 3);
        assert_eq!(search(Scan, true, b"fortran", b"tr"), 5);
        assert_eq!(search(Scan, false, b"fortran", b"xyz"), 0);
        assert_eq!(search(Verify, false, b"ababc", b"ab"), 5);
        assert_eq!(search(Verify, true, b"cabab", b"ab"), 1);
        assert_eq!(search(Index, false, b"abcabc", b"bc"), 2);
        assert_eq!(search(Index, true, b"abcabc", b"bc"), 5);
        assert_eq!(search(Index, true, b"abc", b""), 4);
        assert_eq!(search(Index, false, b"abc", b""), 1);
        assert_eq!(search(Index, true, b"ab", b"abc"), 0);
        assert_eq!(search(Scan, false, b"", b"a"), 0);
    }

    #[test]
    fn index_finds_the_first_occurrence() {
        assert_eq!(index(b"CONVERGENCE: NORM", b"NORM"), 14);
        assert_eq!(index(b"abab", b"ab"), 1);
        assert_eq!(index(b"abc", b"abcd"), 0);
        assert_eq!(index(b"abc", b""), 1);
        assert_eq!(index(b"", b"a"), 0);
    }
}
