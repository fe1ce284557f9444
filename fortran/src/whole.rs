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
//!
//! The front end writes a whole-array assignment of rank 1 (`y = 2*x`) as
//! a loop of a counter `k` from 0 below `size(y)`, each array element
//! taken at `lbound(a, 1) + k`; its derivative statements go in the same
//! loop. [`collapse_counted`] writes such a loop whose body only stores
//! elements at the counter (reading other arrays at the counter too, and
//! loop-invariant scalars) as one array assignment per store:
//! `y_d = 2.0d0 * x_d`, `y = 2.0d0 * x`. Each store reads elements at the
//! counter only, so running the stores one after another over the whole
//! arrays does what the element loop did.

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

/// The loop of a rank-1 whole-array assignment at `lines[at]` (`k = 0_8`):
/// the lines it spans, the names it alone may mention (counter, extent
/// variable, element indices) and its array assignments.
struct CountedLoop {
    /// The lines of the loop, `k = 0_8` to `end do`.
    span: std::ops::Range<usize>,
    /// The counter and the variable holding the extent.
    counter: String,
    extent: String,
    /// The element-index temporaries.
    indices: Vec<String>,
    /// The array assignments replacing the loop.
    assignments: Vec<String>,
}

/// Whether `name` is `array` or its derivative (`array_d`, `array_b`),
/// which has its shape and bounds.
fn same_bounds(name: &str, array: &str) -> bool {
    name == array
        || name
            .strip_prefix(array)
            .is_some_and(|r| r == "_d" || r == "_b")
}

/// Replaces every element reference `a(t)` of `text`, with `t` an index of
/// `indices` (`t` -> the array whose bounds it takes), by the whole array
/// `a`; `None` when an index or the counter remains, or when an array in
/// `written` is referenced otherwise.
fn whole_arrays(
    text: &str,
    indices: &HashMap<String, String>,
    counter: &str,
    written: &HashSet<String>,
    assumed_size: &HashSet<String>,
) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let before = &rest[..open];
        let name_at = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| name_char(*c))
            .last()
            .map_or(open, |(i, _)| i);
        let name = &before[name_at..];
        let inner_end = rest[open..].find(')').map(|i| open + i);
        let subscript = inner_end.map(|e| &rest[open + 1..e]);
        match subscript.and_then(|t| indices.get(t).map(|a| (t, a))) {
            Some((_, array)) if same_bounds(name, array) && !assumed_size.contains(name) => {
                out.push_str(before);
                rest = &rest[inner_end? + 1..];
            }
            _ => {
                if written.contains(name) {
                    return None;
                }
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    let mentioned = |n: &str| mentions(&out, n) > 0;
    (!mentioned(counter) && !indices.keys().any(|t| mentioned(t)) && !out.contains("adjit_"))
        .then_some(out)
}

/// The loop of a rank-1 whole-array assignment starting at `lines[at]`;
/// arrays in `assumed_size` (declared `x(*)`, no whole-array use) keep
/// their loops.
fn counted_loop(
    lines: &[String],
    at: usize,
    assumed_size: &HashSet<String>,
) -> Option<CountedLoop> {
    let l0 = lines.get(at)?;
    let ind = &l0[..l0.len() - l0.trim_start().len()];
    let counter = l0[ind.len()..].strip_suffix(" = 0_8")?;
    if !counter.chars().all(name_char) || counter.is_empty() {
        return None;
    }
    let head = lines.get(at + 1)?;
    let extent = head
        .strip_prefix(ind)?
        .strip_prefix(&format!("do while ({counter} < "))?
        .strip_suffix(')')?;
    if !extent.chars().all(name_char) {
        return None;
    }
    let body = format!("{ind}  ");
    let mut indices = HashMap::new();
    let mut order = Vec::new();
    let mut i = at + 2;
    while let Some(line) = lines.get(i) {
        let Some((t, rest)) = line
            .strip_prefix(&body)
            .and_then(|l| l.split_once(" = int(int(lbound("))
        else {
            break;
        };
        let array = rest.strip_suffix(&format!(", 1, kind=8), 16) + {counter}, 8)"))?;
        if !t.chars().all(name_char)
            || !array.chars().all(name_char)
            || assumed_size.contains(array)
        {
            return None;
        }
        indices.insert(t.to_string(), array.to_string());
        order.push(t.to_string());
        i += 1;
    }
    let mut stores = Vec::new();
    while let Some(line) = lines.get(i) {
        let (target, value) = line.strip_prefix(&body).and_then(|l| l.split_once(" = "))?;
        let Some((name, t)) = target.strip_suffix(')').and_then(|x| x.split_once('(')) else {
            break;
        };
        if !indices.get(t).is_some_and(|a| same_bounds(name, a)) || assumed_size.contains(name) {
            return None;
        }
        stores.push((name.to_string(), value.to_string()));
        i += 1;
    }
    if stores.is_empty()
        || lines.get(i)? != &format!("{body}{counter} = {counter} + 1_8")
        || lines.get(i + 1)? != &format!("{ind}end do")
    {
        return None;
    }
    let written: HashSet<String> = stores.iter().map(|(n, _)| n.clone()).collect();
    let assignments = stores
        .iter()
        .map(|(name, value)| {
            whole_arrays(value, &indices, counter, &written, assumed_size)
                .map(|v| format!("{ind}{name} = {v}"))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(CountedLoop {
        span: at..i + 2,
        counter: counter.to_string(),
        extent: extent.to_string(),
        indices: order,
        assignments,
    })
}

/// Replaces the loops of rank-1 whole-array assignments of `lines` by
/// array assignments (see the module docs) and returns the names no line
/// mentions any more. The counter must appear nowhere else, and the
/// extent variable only in its assignment (`n = size(a, 1, kind=8)`, also
/// removed) before the loop. Arrays in `assumed_size` keep their loops.
pub fn collapse_counted(
    lines: &mut Vec<String>,
    assumed_size: &HashSet<String>,
) -> HashSet<String> {
    let mut gone = HashSet::new();
    let total = |lines: &[String], n: &str| lines.iter().map(|l| mentions(l, n)).sum::<usize>();
    let mut at = 0;
    while at < lines.len() {
        let Some(l) = counted_loop(lines, at, assumed_size) else {
            at += 1;
            continue;
        };
        let inside = |n: &str| {
            lines[l.span.clone()]
                .iter()
                .map(|x| mentions(x, n))
                .sum::<usize>()
        };
        let extent_line = (0..at).rev().find(|&j| mentions(&lines[j], &l.extent) > 0);
        let extent_ok = extent_line.is_some_and(|j| {
            lines[j]
                .trim_start()
                .starts_with(&format!("{} = size(", l.extent))
                && total(lines, &l.extent) == 2
        });
        if total(lines, &l.counter) != inside(&l.counter) || !extent_ok {
            at += 1;
            continue;
        }
        let n = l.assignments.len();
        lines.splice(l.span.clone(), l.assignments);
        if let Some(j) = extent_line {
            lines.remove(j);
            at -= 1;
        }
        gone.insert(l.counter);
        gone.insert(l.extent);
        for t in l.indices {
            if total(lines, &t) == 0 {
                gone.insert(t);
            }
        }
        at += n;
    }
    gone
}

/// Replaces the element loops of `lines` by array assignments (see the
/// module docs) and returns the counters no line mentions any more; the
/// arrays named in `assumed_size` are declared `x(*)` (no whole-array
/// reference).
pub fn collapse(lines: &mut Vec<String>, assumed_size: &HashSet<String>) -> HashSet<String> {
    let mut gone = collapse_counted(lines, assumed_size);
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

    #[test]
    fn a_whole_array_assignment_loop_becomes_array_assignments() {
        let mut l = lines(
            "n4 = size(y, 1, kind=8)
k5 = 0_8
do while (k5 < n4)
  total = int(int(lbound(x, 1, kind=8), 16) + k5, 8)
  total2 = int(int(lbound(y, 1, kind=8), 16) + k5, 8)
  y_d(total2) = merge(0.0d0, x(total) * alpha_d, alpha_d == 0.0d0) + alpha * x_d(total)
  y(total2) = alpha * x(total) + 1.0d0
  k5 = k5 + 1_8
end do
z = 1",
        );
        let gone = collapse(&mut l, &HashSet::new());
        assert_eq!(
            l,
            lines(
                "y_d = merge(0.0d0, x * alpha_d, alpha_d == 0.0d0) + alpha * x_d
y = alpha * x + 1.0d0
z = 1"
            )
        );
        for n in ["n4", "k5", "total", "total2"] {
            assert!(gone.contains(n), "{n}");
        }
    }

    #[test]
    fn an_assumed_size_array_keeps_its_loop() {
        let text = "n1 = size(x, 1, kind=8)
k2 = 0_8
do while (k2 < n1)
  total = int(int(lbound(x, 1, kind=8), 16) + k2, 8)
  y_d(total) = x(total)
  k2 = k2 + 1_8
end do";
        let mut l = lines(text);
        let assumed = HashSet::from(["y_d".to_string()]);
        assert!(collapse(&mut l, &assumed).is_empty());
        assert_eq!(l, lines(text));
    }

    #[test]
    fn element_loops_reading_across_elements_stay() {
        // A written array read at another element, a pop per element, a
        // scalar accumulated: each keeps its loop.
        for body in [
            "  y(total) = y(1_8) * 2.0d0",
            "  y(total) = adjit_pop_value()",
            "  s = s + y(total)",
        ] {
            let text = format!(
                "n1 = size(y, 1, kind=8)
k2 = 0_8
do while (k2 < n1)
  total = int(int(lbound(y, 1, kind=8), 16) + k2, 8)
{body}
  k2 = k2 + 1_8
end do"
            );
            let mut l = lines(&text);
            assert!(collapse(&mut l, &HashSet::new()).is_empty(), "{body}");
            assert_eq!(l, lines(&text));
        }
    }

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
        let gone = collapse(&mut l, &HashSet::new());
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
        assert!(collapse(&mut l, &HashSet::new()).is_empty());
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
        assert!(collapse(&mut l, &HashSet::new()).is_empty());
        assert_eq!(l, lines(text));
    }
}
