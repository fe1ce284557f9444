//! Whole-array assignments recovered from the element loops the IR writes.
//!
//! The transforms set every element of an array (zeroing a derivative at
//! entry, say) with one loop per dimension over `lbound .. lbound + size - 1`
//! that stores a literal. Written as Fortran that is a DO WHILE with a
//! counter per dimension; [`collapse`] turns each such loop, innermost
//! first, into an array assignment (`m_d(:, k1) = 0.0d0`, then
//! `m_d = 0.0d0`). A counter is only removed when every mention of it lies
//! in such loops: each loop sets it before reading it, so no other code
//! sees its value.

use std::collections::{HashMap, HashSet};

/// One element loop found in the lines.
struct ElementLoop {
    /// The line of `k = lbound(a, d, kind=8)`.
    at: usize,
    /// The counter.
    counter: String,
    /// The array assignment replacing the loop's five lines.
    assignment: String,
}

/// Whether `c` may appear in a Fortran name.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// How often the name `name` appears in `line` as a whole name.
fn mentions(line: &str, name: &str) -> usize {
    line.match_indices(name)
        .filter(|(i, _)| {
            let before = line[..*i].chars().next_back();
            let after = line[i + name.len()..].chars().next();
            !before.is_some_and(name_char) && !after.is_some_and(name_char)
        })
        .count()
}

/// Whether `s` is a numeric literal (`0.0d0`, `-1_8`).
fn literal(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
}

/// The element loop whose first line is `lines[at]`, if it is one.
fn element_loop(lines: &[String], at: usize) -> Option<ElementLoop> {
    let [l0, l1, l2, l3, l4] = lines.get(at..at + 5)? else {
        return None;
    };
    let ind = &l0[..l0.len() - l0.trim_start().len()];
    let (counter, rest) = l0[ind.len()..].split_once(" = lbound(")?;
    let (array, rest) = rest.split_once(", ")?;
    let dim = rest.strip_suffix(", kind=8)")?;
    let dim: usize = dim.parse().ok()?;
    if !counter.chars().all(name_char) || !array.chars().all(name_char) {
        return None;
    }
    let head = format!(
        "{ind}do while ({counter} < int(int(lbound({array}, {dim}, kind=8), 16) + \
         size({array}, {dim}, kind=8), 8))"
    );
    let step = format!("{ind}  {counter} = int(int({counter}, 16) + 1_8, 8)");
    if *l1 != head || *l3 != step || *l4 != format!("{ind}end do") {
        return None;
    }
    let store = l2.strip_prefix(ind)?.strip_prefix("  ")?;
    let (target, value) = store.split_once(" = ")?;
    let subs = target
        .strip_prefix(array)?
        .strip_prefix('(')?
        .strip_suffix(')')?;
    let mut subs: Vec<&str> = subs.split(", ").collect();
    let plain = |s: &&str| *s == ":" || (s.chars().all(name_char) && *s != counter);
    if !literal(value)
        || subs.get(dim.checked_sub(1)?) != Some(&counter)
        || subs
            .iter()
            .enumerate()
            .any(|(i, s)| i + 1 != dim && !plain(s))
    {
        return None;
    }
    subs[dim - 1] = ":";
    let assignment = if subs.iter().all(|s| *s == ":") {
        format!("{ind}{array} = {value}")
    } else {
        format!("{ind}{array}({}) = {value}", subs.join(", "))
    };
    Some(ElementLoop {
        at,
        counter: counter.to_string(),
        assignment,
    })
}

/// Replaces the element loops of `lines` by array assignments (see the
/// module docs) and returns the counters no line mentions any more.
pub fn collapse(lines: &mut Vec<String>) -> HashSet<String> {
    let mut gone = HashSet::new();
    loop {
        let found: Vec<ElementLoop> = (0..lines.len())
            .filter_map(|i| element_loop(lines, i))
            .collect();
        // Mentions of each counter inside its loops.
        let mut inside: HashMap<&str, usize> = HashMap::new();
        for l in &found {
            *inside.entry(&l.counter).or_default() += lines[l.at..l.at + 5]
                .iter()
                .map(|line| mentions(line, &l.counter))
                .sum::<usize>();
        }
        let free: HashSet<String> = inside
            .iter()
            .filter(|(c, n)| lines.iter().map(|l| mentions(l, c)).sum::<usize>() == **n)
            .map(|(c, _)| c.to_string())
            .collect();
        if free.is_empty() {
            return gone;
        }
        for l in found.iter().rev().filter(|l| free.contains(&l.counter)) {
            lines.splice(l.at..l.at + 5, [l.assignment.clone()]);
        }
        gone.extend(free);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn nested_zeroing_loops_become_one_assignment() {
        let mut l = lines(
            "k1 = lbound(m_d, 2, kind=8)
do while (k1 < int(int(lbound(m_d, 2, kind=8), 16) + size(m_d, 2, kind=8), 8))
  k0 = lbound(m_d, 1, kind=8)
  do while (k0 < int(int(lbound(m_d, 1, kind=8), 16) + size(m_d, 1, kind=8), 8))
    m_d(k0, k1) = 0.0d0
    k0 = int(int(k0, 16) + 1_8, 8)
  end do
  k1 = int(int(k1, 16) + 1_8, 8)
end do
y = 1",
        );
        let gone = collapse(&mut l);
        assert_eq!(l, lines("m_d = 0.0d0\ny = 1"));
        assert_eq!(gone, HashSet::from(["k0".to_string(), "k1".to_string()]));
    }

    #[test]
    fn a_counter_read_elsewhere_keeps_its_loop() {
        let text = "k0 = lbound(y_d, 1, kind=8)
do while (k0 < int(int(lbound(y_d, 1, kind=8), 16) + size(y_d, 1, kind=8), 8))
  y_d(k0) = 0.0d0
  k0 = int(int(k0, 16) + 1_8, 8)
end do
y = k0";
        let mut l = lines(text);
        assert!(collapse(&mut l).is_empty());
        assert_eq!(l, lines(text));
    }

    #[test]
    fn a_store_of_a_non_literal_keeps_its_loop() {
        let text = "k0 = lbound(y_d, 1, kind=8)
do while (k0 < int(int(lbound(y_d, 1, kind=8), 16) + size(y_d, 1, kind=8), 8))
  y_d(k0) = x(k0)
  k0 = int(int(k0, 16) + 1_8, 8)
end do";
        let mut l = lines(text);
        assert!(collapse(&mut l).is_empty());
        assert_eq!(l, lines(text));
    }
}
