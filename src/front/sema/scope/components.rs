//! ALLOCATABLE components of derived types (`real(8), allocatable ::
//! u(:), m(:, :)`).
//!
//! A structure is flattened into one variable per leaf component, so an
//! ALLOCATABLE component of a structure is an ALLOCATABLE array named
//! `g%u`: ALLOCATE, DEALLOCATE, ALLOCATED, reallocation on assignment,
//! whole-structure assignment (a deep copy, one assignment per component)
//! and derivatives are those of ALLOCATABLE arrays. Arrays of structures
//! with such components are rejected where they are declared.

use super::super::super::ast::{DimSpec, Name};
use super::{Builder, CompType, DerivedType};
use adjit_ir::{Span, Type};

impl Builder<'_, '_> {
    /// Checks an ALLOCATABLE component `name` (the attribute at `at`):
    /// a numeric or LOGICAL array of deferred shape. Reports and returns
    /// false otherwise.
    pub(super) fn allocatable_component(
        &mut self,
        ty: &CompType,
        dims: &Option<Vec<DimSpec>>,
        at: Span,
        name: &Name,
    ) -> bool {
        let n = &name.text;
        let why = match (ty, dims) {
            (CompType::Derived(t), _) => {
                format!("unsupported Fortran: ALLOCATABLE component `{n}` of derived type `{t}`")
            }
            (CompType::Plain(ti), _) if ti.ty == Type::Char => {
                format!("unsupported Fortran: ALLOCATABLE character component `{n}`")
            }
            (_, None) => format!("unsupported Fortran: ALLOCATABLE scalar component `{n}`"),
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

    /// The name of an array component of `def` (at any depth), if any.
    pub(super) fn array_component(&self, def: &DerivedType, depth: usize) -> Option<String> {
        def.comps.iter().find_map(|c| match &c.ty {
            _ if c.dims.is_some() => Some(c.name.clone()),
            CompType::Derived(t) if depth < 16 => self
                .find_type(t)
                .and_then(|inner| self.array_component(&inner, depth + 1)),
            _ => None,
        })
    }
}
