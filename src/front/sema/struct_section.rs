//! Sections of arrays of structures as actual arguments.
//!
//! An array of structures is one array per leaf component, the
//! component's own dimensions first (see `structure`), so a section of it
//! (`cells(2:n-1)`, `cells(1:n:2)`, `grid(:, j)`, `grid(i, :)`) given for a
//! structure dummy is one section per leaf: `cells%w(2:n-1)` and, for an
//! array component `q(4)`, `cells%q(:, 2:n-1)`. Each leaf section is then
//! passed as any numeric section is (`section_arg`): by the address of its
//! first element, or as a slice for an assumed-shape dummy, when it is
//! contiguous; through a temporary copied in before the call and back
//! after it otherwise. Every leaf of a structure has the same shape of
//! structure dimensions, so a leaf of an array component is contiguous
//! exactly when the scalar leaves are.
//!
//! The leaf sections of an actual are made once per statement and kept
//! (by the address of the actual) for the lowerer's lifetime: their
//! temporaries are prepared before the statement and found again, by the
//! address of the leaf expression, when the call is lowered.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::lowerer::{Lowerer, Resolved, StructSection, R};
use super::scope::StructDecl;
use super::{Dummy, Sig};
use adjit_ir::CallArg;
use std::rc::Rc;

/// A subscript `:`.
fn full_range() -> Arg {
    Arg {
        keyword: None,
        value: ArgValue::Range {
            lo: None,
            hi: None,
            stride: None,
        },
    }
}

impl Lowerer<'_, '_> {
    /// The leaf sections of `e` when it is a section of an array of
    /// structures (`a(2:n)`, `g(:, j)`), made on first use; `None` for
    /// anything else (a whole array, an element, not a structure).
    pub(super) fn struct_section(&mut self, e: &Expr) -> R<Option<(StructDecl, Rc<Vec<Arg>>)>> {
        let inner = e.without_parens();
        let ExprKind::Apply { name, args } = &inner.kind else {
            return Ok(None);
        };
        if !args
            .iter()
            .any(|a| matches!(a.value, ArgValue::Range { .. }))
            || self.find_type(&name.text).is_some()
        {
            return Ok(None);
        }
        let key = e as *const Expr;
        if let Some(s) = self
            .struct_sections
            .iter()
            .find(|s| s.key == key && s.expr == *e)
        {
            return Ok(Some((s.decl.clone(), s.leaves.clone())));
        }
        let st = match self.resolve(name)? {
            Resolved::Struct(st) if st.dims.is_some() => st,
            _ => return Ok(None),
        };
        let rank = st.dims.as_ref().map_or(0, Vec::len);
        self.check_subscript_count(name, rank, args.len())?;
        if let Some(l) = st.leaves.iter().find(|l| l.contains('.')) {
            // The storage of an ALLOCATABLE component (`b%u.data`).
            let comp = l.split('.').next().unwrap_or(l);
            return Err(self.err(
                name.span,
                format!(
                    "unsupported Fortran: a section of the array of structures `{}`, whose type has the ALLOCATABLE component `{comp}`, as an actual argument",
                    name.text
                ),
            ));
        }
        let mut leaves = Vec::new();
        for l in &st.leaves {
            let leaf = Name {
                text: l.clone(),
                span: name.span,
            };
            let own = match self.resolve(&leaf)? {
                Resolved::Var(v) => self.proc.var(v).dims.len().saturating_sub(rank),
                _ => {
                    return Err(self.err(
                        name.span,
                        format!(
                            "unsupported Fortran: a section of `{}`, whose component `{l}` is not an array of numbers or logicals, as an actual argument",
                            name.text
                        ),
                    ))
                }
            };
            let mut sub: Vec<Arg> = (0..own).map(|_| full_range()).collect();
            sub.extend(args.iter().cloned());
            leaves.push(Arg {
                keyword: None,
                value: ArgValue::Expr(Expr {
                    kind: ExprKind::Apply {
                        name: leaf,
                        args: sub,
                    },
                    span: e.span,
                }),
            });
        }
        let leaves = Rc::new(leaves);
        self.struct_sections.push(StructSection {
            key,
            expr: e.clone(),
            decl: st.clone(),
            leaves: leaves.clone(),
        });
        Ok(Some((st, leaves)))
    }
}

impl Lowerer<'_, '_> {
    /// Places the leaf sections `leaves` of a section of an array of
    /// structures given for the structure dummy `d` (the `i`-th argument
    /// of `callee`): a leaf taking hidden extents with them, any other as
    /// a numeric section (a slice when the dummy's last extent is
    /// assumed).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn section_leaves(
        &mut self,
        sig: &Sig,
        d: &Dummy,
        leaves: &[Arg],
        i: usize,
        callee: &Name,
        explicit: bool,
        out: &mut [Option<CallArg>],
    ) -> R<()> {
        for (&pi, leaf) in d.params.iter().zip(leaves) {
            if let Some(ld) = d.leaves.iter().find(|l| l.params.first() == Some(&pi)) {
                self.plain_actual(sig, ld, leaf, i, callee, (explicit, true), out)?;
                continue;
            }
            let (pty, prank) = sig.params[pi];
            let assumed = sig.dims[pi].last().is_some_and(|x| x.upper.is_none());
            out[pi] = Some(self.actual_arg(leaf, (pty, prank, assumed), i, callee)?);
        }
        Ok(())
    }
}
