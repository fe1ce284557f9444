//! Type extension (`type, extends(base) :: child`) in the symbol tables.
//!
//! An extended type is its parent's components followed by its own, so a
//! structure of the child type is flattened like any other, its inherited
//! components named as they are usually written (`c%x`). The parent
//! component (`c%base`) is a view of the structure: a structure of the
//! parent type whose leaves are the inherited leaves, so it can be passed,
//! assigned and referenced (`c%base%x` is `c%x`, `g%point3%point` is `g%point`, see
//! `Lowerer::canonical_component`). There is no polymorphism: CLASS and
//! type-bound procedures stay rejected.

use super::super::super::ast::{Name, TypeDef};
use super::{Builder, Component, DerivedType, DimSpec, StructDecl, Sym};

impl Builder<'_, '_> {
    /// The inherited components of a TYPE definition (the parent's, in
    /// order) and its parent, `None` for a type that extends nothing or
    /// an unknown parent (reported).
    pub(super) fn inherited(&mut self, def: &TypeDef) -> (Vec<Component>, Option<(String, usize)>) {
        let Some(p) = &def.extends else {
            return (Vec::new(), None);
        };
        match self.find_type(&p.text) {
            Some(parent) => {
                let n = parent.comps.len();
                (parent.comps, Some((parent.name, n)))
            }
            None => {
                self.error(
                    p.span,
                    format!(
                        "unknown parent type `{}` of type `{}` (define it before the extended type)",
                        p.text, def.name.text
                    ),
                );
                (Vec::new(), None)
            }
        }
    }

    /// Refuses a component of an extended type named like its parent
    /// component, as gfortran does.
    pub(super) fn check_parent_name(&mut self, def: &TypeDef, comp: &Name) -> bool {
        let clash = def.extends.as_ref().is_some_and(|p| p.text == comp.text);
        if clash {
            self.error(
                comp.span,
                format!(
                    "component `{}` of type `{}` has the name of its parent component",
                    comp.text, def.name.text
                ),
            );
        }
        !clash
    }

    /// Declares the parent component of a structure `prefix` of type `def`
    /// and its own parent's, at any depth (`g%point3` and `g%point`, which
    /// is also an inherited component of `g`), as views of the inherited
    /// leaves among `leaves` (the structure's leaves, in order).
    pub(super) fn parent_views(
        &mut self,
        prefix: &str,
        def: &DerivedType,
        leaves: &[String],
        dims: &Option<Vec<DimSpec>>,
    ) {
        let mut def = def.clone();
        while let Some((parent, n)) = def.parent.clone() {
            let inherited: Vec<String> = leaves
                .iter()
                .filter(|l| {
                    def.comps[..n].iter().any(|c| {
                        l.strip_prefix(prefix)
                            .and_then(|r| r.strip_prefix('%'))
                            .and_then(|r| r.strip_prefix(c.name.as_str()))
                            .is_some_and(|r| r.is_empty() || r.starts_with('%'))
                    })
                })
                .cloned()
                .collect();
            self.scope.syms.insert(
                format!("{prefix}%{parent}"),
                Sym::Struct(StructDecl {
                    type_name: parent.clone(),
                    leaves: inherited,
                    dims: dims.clone(),
                }),
            );
            let Some(p) = self.find_type(&parent) else {
                return;
            };
            def = p;
        }
    }
}
