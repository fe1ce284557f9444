//! Leaves of module structures whose path goes through arrays of
//! structures, and where their subscripts belong in Fortran source.
//!
//! The front end flattens a structure into one variable per leaf
//! component; an array of structures gives each leaf the component's own
//! dimensions followed by those of the enclosing arrays, innermost first
//! (`p%cells(j)%s%h(k)` is the element `(k, j)` of the leaf `p%cells%s%h`).
//! A module global's name marks each part that is an array of structures
//! with its rank (`m::p%cells(:)%s%h`, `m::g(:,:)%w`); Fortran allows only
//! one part of a reference to be an array, so the back end writes an
//! element with each part's subscripts after the part.

use crate::ident;

/// The parts of a leaf's path, outermost first, each with the rank of the
/// array of structures it is (0: a scalar structure, or the leaf).
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentPath {
    parts: Vec<(String, usize)>,
}

impl ComponentPath {
    /// The path of the module entity `raw` (a global's name after `::`)
    /// when some part of it is a marked array of structures (`a(:)%x`,
    /// `p%cells(:)%s%h`); `None` otherwise.
    pub fn parse(raw: &str) -> Option<ComponentPath> {
        if !raw.contains(")%") {
            return None;
        }
        let parts = raw
            .split('%')
            .map(|part| match part.split_once('(') {
                Some((name, marks)) => (ident(name), marks.matches(':').count()),
                None => (ident(part), 0),
            })
            .collect();
        Some(ComponentPath { parts })
    }

    /// The outermost part: the module variable itself.
    pub fn base(&self) -> &str {
        &self.parts[0].0
    }

    /// The number of subscripts the arrays of structures take (the leaf's
    /// own come before them in the flattened array).
    pub fn structure_rank(&self) -> usize {
        self.parts.iter().map(|(_, rank)| rank).sum()
    }

    /// Whether the whole flattened leaf, of rank `rank`, is the Fortran
    /// array `plain()` names: at most one part (the leaf's own dimensions
    /// among them) is an array (`a%x` is, `a%w` of an array `w` is not).
    pub fn whole_is_designator(&self, rank: usize) -> bool {
        let leaf_is_array = rank > self.structure_rank();
        let arrays = self.parts.iter().filter(|(_, r)| *r > 0).count();
        arrays + usize::from(leaf_is_array) <= 1
    }

    /// Whether the first `leading` subscripts of the flattened leaf, of
    /// rank `rank`, all belong to one part of the path (the leaf's own
    /// dimensions, or else the innermost array of structures): only then
    /// are they one array section in Fortran source.
    pub fn leading_in_one_part(&self, rank: usize, leading: usize) -> bool {
        let own = rank.saturating_sub(self.structure_rank());
        let first = if own > 0 {
            own
        } else {
            self.parts
                .iter()
                .rev()
                .map(|(_, r)| *r)
                .find(|&r| r > 0)
                .unwrap_or(0)
        };
        leading <= first
    }

    /// The path without subscripts (`p%cells%s%h`).
    pub fn plain(&self) -> String {
        let names: Vec<&str> = self.parts.iter().map(|(n, _)| n.as_str()).collect();
        names.join("%")
    }

    /// The element of the flattened leaf at subscripts `subs` (innermost
    /// first, as the IR has them) in Fortran source:
    /// `p%cells(j)%s%h(k)` for `(k, j)`.
    pub fn element(&self, subs: &[String]) -> String {
        let own = subs.len().saturating_sub(self.structure_rank());
        let mut end = subs.len();
        let mut text = String::new();
        for (i, (name, rank)) in self.parts.iter().enumerate() {
            if i > 0 {
                text.push('%');
            }
            text.push_str(name);
            if *rank > 0 {
                let start = end.saturating_sub(*rank).max(own);
                text.push_str(&format!("({})", subs[start..end].join(", ")));
                end = start;
            }
        }
        if own > 0 {
            text.push_str(&format!("({})", subs[..own].join(", ")));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn unmarked_paths_are_not_component_paths() {
        assert_eq!(ComponentPath::parse("p%x"), None);
        assert_eq!(ComponentPath::parse("counter"), None);
    }

    #[test]
    fn an_array_of_structures_at_the_base_takes_the_last_subscripts() {
        let p = ComponentPath::parse("a(:)%w").unwrap();
        assert_eq!(p.base(), "a");
        assert_eq!(p.structure_rank(), 1);
        assert_eq!(p.plain(), "a%w");
        assert_eq!(p.element(&subs(&["k", "i"])), "a(i)%w(k)");
        assert_eq!(p.element(&subs(&["i"])), "a(i)%w");
        assert!(p.whole_is_designator(1));
        assert!(!p.whole_is_designator(2));
    }

    #[test]
    fn inner_arrays_of_structures_take_their_own_subscripts() {
        let p = ComponentPath::parse("last%cells(:)%s%h").unwrap();
        assert_eq!(p.structure_rank(), 1);
        assert_eq!(p.plain(), "last%cells%s%h");
        assert_eq!(p.element(&subs(&["1_4", "j"])), "last%cells(j)%s%h(1_4)");
        // Depth 3, a rank-2 inner array and a rank-2 leaf.
        let p = ComponentPath::parse("g(:)%m(:,:)%c(:)%q").unwrap();
        assert_eq!(p.structure_rank(), 4);
        assert_eq!(
            p.element(&subs(&["r", "s", "k", "j1", "j2", "i"])),
            "g(i)%m(j1, j2)%c(k)%q(r, s)"
        );
        assert!(!p.whole_is_designator(4));
        assert!(p.leading_in_one_part(6, 2));
        assert!(!p.leading_in_one_part(6, 3));
        let p = ComponentPath::parse("kept(:)%layers(:)%b").unwrap();
        assert!(p.leading_in_one_part(2, 1));
        assert!(!p.leading_in_one_part(2, 2));
    }
}
