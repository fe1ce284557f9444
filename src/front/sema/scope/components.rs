//! ALLOCATABLE components of derived types (`real(8), allocatable ::
//! u(:), m(:, :)`).
//!
//! A structure is flattened into one variable per leaf component, so an
//! ALLOCATABLE component of a structure is an ALLOCATABLE array named
//! `g%u`: ALLOCATE, DEALLOCATE, ALLOCATED, reallocation on assignment,
//! whole-structure assignment (a deep copy, one assignment per component)
//! and derivatives are those of ALLOCATABLE arrays.
//!
//! An ALLOCATABLE scalar component (`real(8), allocatable :: s`, `type(t),
//! allocatable :: c`) is stored as the component itself (a scalar leaf, or
//! the leaves of the structure) and an integer leaf `g%s.alloc` holding
//! its allocation status (0 at entry; see [`status_name`] and
//! `sema::alloc_scalar`).
//!
//! In an array of structures each element has an allocation of its own;
//! the component is then stored as the lowering of these components
//! (`sema::ragged`) describes:
//! one ALLOCATABLE array wide enough for every element's allocation and
//! an integer array of each element's allocation status and bounds.

use super::super::super::ast::{DimSpec, Expr, ExprKind, Intent, Name};
use super::{Builder, CompType, Component, DerivedType, Sym, TypeInfo, VarDecl};
use adjit_ir::{Span, Type};

/// The name of the storage leaf of the component `name` (`b%u`) of an
/// array of structures.
pub(crate) fn data_name(name: &str) -> String {
    format!("{name}.data")
}

/// The name of the allocation status leaf (0 or 1) of the ALLOCATABLE
/// scalar component or variable `name` (`g%s`, `g%c`).
pub(crate) fn status_name(name: &str) -> String {
    format!("{name}.alloc")
}

/// The name of the status and bounds leaf of the component `name`.
pub(crate) fn bounds_name(name: &str) -> String {
    format!("{name}.bounds")
}

impl Builder<'_, '_> {
    /// Checks an ALLOCATABLE component `name` (the attribute at `at`):
    /// a numeric or LOGICAL array of deferred shape, a numeric or LOGICAL
    /// scalar, or a scalar of derived type. Reports and returns false
    /// otherwise.
    pub(super) fn allocatable_component(
        &mut self,
        ty: &CompType,
        dims: &Option<Vec<DimSpec>>,
        at: Span,
        name: &Name,
    ) -> bool {
        let n = &name.text;
        let why = match (ty, dims) {
            (CompType::Derived(_), None) => return true,
            (CompType::Derived(_), Some(d))
                if d.len() <= 7
                    && d.iter()
                        .all(|x| matches!(x, DimSpec::AssumedShape { lower: None })) =>
            {
                return true
            }
            (CompType::Derived(t), _) => {
                format!(
                    "unsupported Fortran: ALLOCATABLE array component `{n}` of derived type `{t}` must have a deferred shape, `{n}(:)`"
                )
            }
            // A deferred-length string (`character(len=:), allocatable
            // :: s`); arrays of them are refused with the declaration.
            (CompType::Plain(ti), _) if ti.char_len == super::CharLenInfo::Deferred => return true,
            // Of constant length: held as a deferred-length string.
            (CompType::Plain(ti), _)
                if ti.ty == Type::Char && matches!(ti.char_len, super::CharLenInfo::Const(_)) =>
            {
                return true
            }
            (CompType::Plain(ti), _) if ti.ty == Type::Char => {
                format!("unsupported Fortran: ALLOCATABLE character component `{n}`")
            }
            (_, None) => return true,
            (_, Some(d)) if d.len() > 7 => "arrays have at most 7 dimensions".to_string(),
            (_, Some(d))
                if d.iter()
                    .all(|x| matches!(x, DimSpec::AssumedShape { lower: None })) =>
            {
                return true
            }
            _ => format!(
                "ALLOCATABLE component `{n}` must have a deferred shape, `{n}(:)` or `{n}(:, :)`"
            ),
        };
        let span = if dims.is_none() { at } else { name.span };
        self.error(span, why);
        false
    }

    /// Declares the ALLOCATABLE component `c` (of type `ti`) of the array
    /// of structures whose elements' component is `name`, of dimensions
    /// `dims`: its storage (ALLOCATABLE, the component's rank and the
    /// array's) and its status and bounds (zero at entry: unallocated),
    /// both leaves of the structure (the bounds first: the array's shape
    /// is that of its first leaf, and the storage may be unallocated).
    pub(super) fn ragged_component(
        &mut self,
        name: &str,
        ti: &TypeInfo,
        c: &Component,
        dims: &[DimSpec],
        template: &VarDecl,
        leaves: &mut Vec<String>,
    ) {
        let rank = c.dims.as_ref().map_or(0, Vec::len);
        let span = template.span;
        let int = |value: i64| Expr {
            kind: ExprKind::Int { value, kind: None },
            span,
        };
        let deferred = DimSpec::AssumedShape { lower: None };
        let data = VarDecl {
            ty: Some(ti.clone()),
            dims: Some(vec![deferred.clone(); rank + dims.len()]),
            default_init: None,
            allocatable: Some(span),
            ..template.clone()
        };
        let status = DimSpec::Explicit {
            lower: Some(int(0)),
            upper: int(2 * rank as i64),
        };
        // Of an ALLOCATABLE array of structures, the bounds leaf is
        // ALLOCATABLE too, its status and bounds dimension given to
        // ALLOCATE before the structures' bounds (zero-filled: unallocated).
        let bounds = match template.allocatable {
            Some(at) => VarDecl {
                ty: Some(TypeInfo::plain(Type::I32)),
                dims: Some(vec![deferred.clone(); 1 + dims.len()]),
                component_dims: Some(vec![status]),
                default_init: None,
                allocatable: Some(at),
                ..template.clone()
            },
            None => VarDecl {
                ty: Some(TypeInfo::plain(Type::I32)),
                dims: Some(
                    std::iter::once(status)
                        .chain(dims.iter().cloned())
                        .collect(),
                ),
                default_init: Some(int(0)),
                allocatable: None,
                ..template.clone()
            },
        };
        for (n, v) in [(bounds_name(name), bounds), (data_name(name), data)] {
            self.scope.syms.insert(n.clone(), Sym::Var(v));
            leaves.push(n);
        }
    }
}

impl Builder<'_, '_> {
    /// Declares the allocation status leaf of the ALLOCATABLE scalar
    /// component `name` (an integer, of the dimensions `dims` of an array
    /// of structures; 0 at entry: unallocated) and appends it to `leaves`.
    pub(super) fn status_leaf(
        &mut self,
        name: &str,
        dims: &Option<Vec<DimSpec>>,
        template: &VarDecl,
        leaves: &mut Vec<String>,
    ) {
        // Of an ALLOCATABLE array of structures the status is an
        // ALLOCATABLE array too, allocated (zero-filled: unallocated) and
        // released with the structures.
        let status = VarDecl {
            ty: Some(TypeInfo::plain(Type::I32)),
            dims: dims.clone(),
            default_init: template.allocatable.is_none().then_some(Expr {
                kind: ExprKind::Int {
                    value: 0,
                    kind: None,
                },
                span: template.span,
            }),
            allocatable: template.allocatable,
            ..template.clone()
        };
        let n = status_name(name);
        self.scope.syms.insert(n.clone(), Sym::Var(status));
        leaves.push(n);
    }
}

impl Builder<'_, '_> {
    /// An ALLOCATABLE scalar variable `name` (the attribute at `at`): a
    /// local, SAVE variable or dummy argument, stored as the scalar (or
    /// structure) beside its status variable (see [`status_name`]; a
    /// dummy's is a parameter of its own, of the dummy's INTENT, `intent`
    /// when given here: INTENT(OUT) clears it on entry, as the default
    /// initialization of INTENT(OUT) dummies does); returns false after
    /// reporting a CHARACTER variable.
    pub(super) fn allocatable_scalar(
        &mut self,
        name: &Name,
        at: Span,
        intent: Option<Intent>,
    ) -> bool {
        let n = &name.text;
        let template = self.scope.var(n).cloned();
        if template
            .as_ref()
            .is_some_and(|v| v.ty.as_ref().is_some_and(|t| t.ty == Type::Char))
        {
            self.error(
                at,
                format!("unsupported Fortran: ALLOCATABLE scalar CHARACTER variable `{n}`"),
            );
            return false;
        }
        let template = template.unwrap_or_else(|| VarDecl::new(name.span));
        if let Some(Sym::Var(v)) = self.scope.syms.get_mut(n) {
            v.allocatable = None;
        }
        let template = VarDecl {
            allocatable: None,
            intent: intent.or(template.intent),
            ..template
        };
        let mut leaves = Vec::new();
        self.status_leaf(n, &None, &template, &mut leaves);
        true
    }
}

impl Builder<'_, '_> {
    /// Checks an ALLOCATABLE array of structures `name` of type `def` and
    /// dimensions `dims` (the attribute at `at`): a deferred shape and a
    /// type whose components are numeric or LOGICAL scalars (ALLOCATABLE
    /// or not), fixed-size or ALLOCATABLE arrays, CHARACTER scalars of
    /// constant length (or structures of such),
    /// each leaf an ALLOCATABLE array of
    /// the component's dimensions and the structures' shape. Reports and
    /// returns false otherwise.
    pub(super) fn allocatable_structures(
        &mut self,
        name: &str,
        def: &DerivedType,
        dims: &[DimSpec],
        at: Span,
    ) -> bool {
        let why = if dims.len() > 7 {
            "arrays have at most 7 dimensions".to_string()
        } else if !dims
            .iter()
            .all(|x| matches!(x, DimSpec::AssumedShape { lower: None }))
        {
            format!(
                "ALLOCATABLE array of structures `{name}` must have a deferred shape, `{name}(:)`"
            )
        } else if let Some(c) = self.non_scalar_component(def, 0) {
            format!(
                "unsupported Fortran: ALLOCATABLE array of structures `{name}` of type `{}`, whose component `{c}` is a CHARACTER array, a deferred-length string, an array of structures or an ALLOCATABLE structure",
                def.name
            )
        } else {
            return true;
        };
        self.error(at, why);
        false
    }

    /// The first component of `def` (at any depth) that is not a numeric
    /// or LOGICAL scalar or fixed-size array, a CHARACTER scalar of
    /// constant length, nor a structure of such.
    fn non_scalar_component(&self, def: &DerivedType, depth: usize) -> Option<String> {
        def.comps.iter().find_map(|c| match &c.ty {
            // An ALLOCATABLE array component: `sema::ragged` storage; an
            // ALLOCATABLE numeric or LOGICAL scalar: beside its status leaf.
            CompType::Plain(ti) if c.allocatable && ti.ty != Type::Char => None,
            _ if c.allocatable => Some(c.name.clone()),
            // A scalar string of constant length: an ALLOCATABLE rank-1
            // CHARACTER array of that length (one string per element).
            CompType::Plain(ti)
                if ti.ty == Type::Char
                    && c.dims.is_none()
                    && matches!(ti.char_len, super::CharLenInfo::Const(_)) =>
            {
                None
            }
            CompType::Plain(ti) if ti.ty == Type::Char => Some(c.name.clone()),
            CompType::Plain(_) => None,
            CompType::Derived(_) if c.dims.is_some() => Some(c.name.clone()),
            CompType::Derived(t) => match self.find_type(t) {
                Some(inner) if depth < 16 => self.non_scalar_component(&inner, depth + 1),
                _ => Some(c.name.clone()),
            },
        })
    }
}
