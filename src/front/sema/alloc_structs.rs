//! ALLOCATABLE arrays of structures (`type(pt), allocatable :: b(:)`, as
//! variables or components): every leaf of the structure is an
//! ALLOCATABLE array of the structures' shape, after the component's own
//! dimensions for a fixed-size array component (`scope::components`
//! admits types whose components are numeric or LOGICAL scalars and
//! fixed-size arrays, ALLOCATABLE or not), so `allocate(b(lo:hi))` allocates every leaf with
//! those bounds (`b%x(1:3, lo:hi)` for `x(3)`), `deallocate(b)` releases
//! them and `allocated(b)` is that of the first. An ALLOCATABLE scalar
//! component `s` is the leaf `b%s` beside its status leaf `b%s.alloc`
//! (zero-filled by the ALLOCATE: every element's unallocated; see
//! `sema::alloc_scalar` for the elements' own ALLOCATE). Elements, SIZE, LBOUND,
//! UBOUND, whole-structure assignment and derivatives are those of the
//! leaves.
//!
//! An ALLOCATABLE array component of the type (`real(8), allocatable ::
//! u(:)`) is stored as for other arrays of structures (`sema::ragged`):
//! its status and bounds leaf `b%u.bounds(0:2r, lo:hi)` is allocated
//! (zero-filled: every element's component unallocated) and deallocated
//! with the structures, while its storage leaf `b%u.data`, grown by the
//! elements' own ALLOCATE, is left alone by `allocate(b(n))` and released
//! (when allocated) by `deallocate(b)`.

use super::super::ast::{Arg, ArgValue, DimSpec, Expr, ExprKind, Name, Stmt, StmtKind};
use super::lowerer::{Lowerer, Resolved, R};
use adjit_ir::{Inst, Type, Value, VarId};

/// An ALLOCATE bound `upper` written `1:upper` (a range as given).
fn as_range(a: &Arg) -> Arg {
    match &a.value {
        ArgValue::Expr(upper) => Arg {
            keyword: a.keyword.clone(),
            value: ArgValue::Range {
                lo: Some(Expr {
                    kind: ExprKind::Int {
                        value: 1,
                        kind: None,
                    },
                    span: upper.span,
                }),
                hi: Some(upper.clone()),
                stride: None,
            },
        },
        ArgValue::Range { .. } => a.clone(),
    }
}

impl Lowerer<'_, '_> {
    /// The leaves of the ALLOCATABLE array of structures `name`, when it
    /// is one.
    pub(super) fn allocatable_structures(&mut self, name: &Name) -> Option<Vec<String>> {
        let Ok(Resolved::Struct(st)) = self.resolve(name) else {
            return None;
        };
        st.dims.as_ref()?;
        let first = self.leaf_var(st.leaves.first()?, name)?;
        self.proc
            .var(first)
            .storage
            .is_allocatable()
            .then_some(st.leaves)
    }

    /// The variable of the leaf `text` (named at `at`).
    fn leaf_var(&mut self, text: &str, at: &Name) -> Option<VarId> {
        let leaf = Name {
            text: text.to_string(),
            span: at.span,
        };
        match self.resolve(&leaf) {
            Ok(Resolved::Var(v)) => Some(v),
            _ => None,
        }
    }

    /// ALLOCATE or DEALLOCATE naming ALLOCATABLE arrays of structures:
    /// the statement with each replaced by its leaves; `None` otherwise.
    pub(super) fn structures_allocation(&mut self, s: &Stmt) -> Option<Stmt> {
        let objects = match &s.kind {
            StmtKind::Allocate { objects, .. } | StmtKind::Deallocate { objects, .. } => objects,
            _ => return None,
        };
        let mut out = Vec::new();
        let mut any = false;
        for o in objects {
            let (name, args) = match &o.kind {
                ExprKind::Name(n) => (n, None),
                ExprKind::Apply { name, args } => (name, Some(args)),
                _ => {
                    out.push(o.clone());
                    continue;
                }
            };
            let Some(leaves) = self.allocatable_structures(name) else {
                out.push(o.clone());
                continue;
            };
            any = true;
            for l in leaves {
                if self.is_component_storage(&l) {
                    if matches!(s.kind, StmtKind::Deallocate { .. }) {
                        if let Some(v) = self.leaf_var(&l, name) {
                            self.release_if_allocated(v);
                        }
                    }
                    continue;
                }
                let kind = match args {
                    None => ExprKind::Name(Name {
                        text: l,
                        span: name.span,
                    }),
                    // Each bound as `lower:upper` (`b%s(1:n)`, not taken for
                    // the element `b(n)%s` of an ALLOCATABLE scalar component).
                    Some(args) => ExprKind::Apply {
                        args: self
                            .component_bounds(&l)
                            .chain(args.iter().map(as_range))
                            .collect(),
                        name: Name {
                            text: l,
                            span: name.span,
                        },
                    },
                };
                out.push(Expr { kind, span: o.span });
            }
        }
        if !any {
            return None;
        }
        let mut s = s.clone();
        match &mut s.kind {
            StmtKind::Allocate { objects, .. } | StmtKind::Deallocate { objects, .. } => {
                *objects = out
            }
            _ => {}
        }
        Some(s)
    }

    /// The default initialization of the components of the arrays of
    /// structures a lowered `allocate(...)` statement `s` (without
    /// SOURCE= or MOLD=) allocated: each leaf with a default value is set
    /// to it, a CHARACTER one string by string.
    pub(super) fn structures_default_init(&mut self, s: &Stmt) -> R<()> {
        let StmtKind::Allocate {
            objects,
            source: None,
            mold: None,
            ..
        } = &s.kind
        else {
            return Ok(());
        };
        for o in objects {
            let name = match &o.kind {
                ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => n,
                _ => continue,
            };
            for leaf in self.allocatable_structures(name).unwrap_or_default() {
                let init = self
                    .visible_decl(&leaf)
                    .and_then(|(_, d)| d.default_init.clone());
                let Some(init) = init else {
                    continue;
                };
                let leaf = Name {
                    text: leaf,
                    span: name.span,
                };
                if self.is_deferred_string_array(&leaf.text) {
                    self.fill_string_array(&leaf, &init)?;
                } else {
                    let target = Expr {
                        kind: ExprKind::Name(leaf),
                        span: o.span,
                    };
                    self.assign(&target, &init)?;
                }
            }
        }
        Ok(())
    }

    /// True when the leaf `leaf` is the storage of an ALLOCATABLE component
    /// of the elements (`b%u.data`), allocated by the elements' ALLOCATE.
    pub(super) fn is_component_storage(&self, leaf: &str) -> bool {
        leaf.strip_suffix(".data")
            .is_some_and(|c| self.ragged_rank(c).is_some())
    }

    /// The bounds `lower:upper` of the array component a leaf of an
    /// ALLOCATABLE array of structures stands for (none for a scalar
    /// component): they come before the structures' bounds in ALLOCATE.
    fn component_bounds(&self, leaf: &str) -> impl Iterator<Item = Arg> {
        let dims = self
            .visible_decl(leaf)
            .and_then(|(_, d)| d.component_dims.clone())
            .unwrap_or_default();
        dims.into_iter().filter_map(|d| match d {
            DimSpec::Explicit { lower, upper } => Some(Arg {
                keyword: None,
                value: ArgValue::Range {
                    lo: Some(lower.unwrap_or(Expr {
                        kind: ExprKind::Int {
                            value: 1,
                            kind: None,
                        },
                        span: upper.span,
                    })),
                    hi: Some(upper),
                    stride: None,
                },
            }),
            _ => None,
        })
    }

    /// `allocated(b)` of an ALLOCATABLE array of structures: that of its
    /// first leaf; `None` for another argument.
    pub(super) fn structures_allocated(&mut self, arg: &Expr) -> Option<Value> {
        let ExprKind::Name(n) = &arg.kind else {
            return None;
        };
        let leaves = self.allocatable_structures(n)?;
        let v = self.leaf_var(&leaves[0], n)?;
        Some(self.val(Inst::Allocated(v), Type::Bool))
    }
}
