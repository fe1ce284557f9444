//! Tables of facts about expressions keyed by their address.
//!
//! The lowerer remembers, for the statement being lowered, which
//! expressions were computed before it (hoisted reductions and function
//! references) and where positional array intrinsics read their arguments.
//! Expressions have no identity but their address, and an address is
//! reused as soon as the expression there is dropped (rewritten statements
//! are copies, some short-lived). A table that outlived its expressions
//! gave a later expression allocated at the same address the entry of
//! the dropped one, so the verdict depended on the allocator (on the
//! source layout, from run to run).
//!
//! [`ExprTable`] rules that out two ways: its entries are released when
//! the statement that made them is lowered ([`ExprTable::mark`],
//! [`ExprTable::release`], done by `Lowerer::stmt`), and each entry names
//! the expression it was made for (its position and kind), so that an
//! expression that only shares the address does not match.

use super::super::ast::{Expr, ExprKind};
use adjit_ir::Span;
use std::collections::HashMap;
use std::mem::Discriminant;

/// What an entry records of its expression, checked on every look-up.
type Fingerprint = (Span, Discriminant<ExprKind>);

/// The fingerprint of an expression.
fn fingerprint(e: &Expr) -> Fingerprint {
    (e.span, std::mem::discriminant(&e.kind))
}

/// Facts `V` about live expressions, by address (see the module
/// documentation).
#[derive(Debug)]
pub(crate) struct ExprTable<V> {
    /// The entries, by address, with the fingerprint of their expression.
    entries: HashMap<*const Expr, (Fingerprint, V)>,
    /// The addresses inserted, in order (to release the latest ones).
    order: Vec<*const Expr>,
}

impl<V> Default for ExprTable<V> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
            order: Vec::new(),
        }
    }
}

impl<V> ExprTable<V> {
    /// Records `v` for the expression `e` (replacing an earlier entry).
    pub fn insert(&mut self, e: &Expr, v: V) {
        let key = e as *const Expr;
        self.entries.insert(key, (fingerprint(e), v));
        self.order.push(key);
    }

    /// The fact recorded for `e` itself: none when the entry at its
    /// address was made for another expression.
    pub fn get(&self, e: &Expr) -> Option<&V> {
        match self.entries.get(&(e as *const Expr)) {
            Some((f, v)) if *f == fingerprint(e) => Some(v),
            _ => None,
        }
    }

    /// True when a fact is recorded for `e` (see [`Self::get`]).
    pub fn contains(&self, e: &Expr) -> bool {
        self.get(e).is_some()
    }

    /// The current position, to [`Self::release`] the entries made after
    /// it.
    pub fn mark(&self) -> usize {
        self.order.len()
    }

    /// Forgets the entries inserted since `mark` (their expressions may be
    /// dropped from now on).
    pub fn release(&mut self, mark: usize) {
        for key in self.order.drain(mark.min(self.order.len())..) {
            self.entries.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(value: i64, col: u32) -> Expr {
        Expr {
            kind: ExprKind::Int { value, kind: None },
            span: Span {
                file: 0,
                line: 1,
                col,
            },
        }
    }

    #[test]
    fn an_entry_matches_only_its_own_expression() {
        let mut a = int(1, 3);
        let mut t = ExprTable::default();
        t.insert(&a, 7u32);
        assert_eq!(t.get(&a), Some(&7));
        assert_eq!(t.get(&int(1, 3)), None, "an equal expression elsewhere");
        // The same address holding another expression (a reused address).
        a.span.col = 4;
        assert!(!t.contains(&a), "same address, another position");
        a = int(1, 3);
        assert!(t.contains(&a));
        a.kind = ExprKind::Paren(Box::new(int(1, 3)));
        assert!(!t.contains(&a), "same address and position, another kind");
    }

    #[test]
    fn release_forgets_the_entries_made_after_the_mark() {
        let (a, b) = (int(1, 1), int(2, 2));
        let mut t = ExprTable::default();
        t.insert(&a, 'a');
        let mark = t.mark();
        t.insert(&b, 'b');
        t.insert(&b, 'c');
        t.release(mark);
        assert_eq!(t.get(&a), Some(&'a'));
        assert_eq!(t.get(&b), None);
        assert_eq!(t.mark(), 1);
    }
}
