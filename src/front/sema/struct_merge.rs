//! MERGE of structures: `merge(a, b, flag)` with `a` and `b` structures
//! of one type (variables, elements of arrays of structures) is the
//! structure whose every
//! component is the MERGE of the two components, `merge(a%x, b%x, flag)`;
//! it is assigned whole or passed as an actual argument like any
//! structure reference.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::StructDecl;

impl Lowerer<'_, '_> {
    /// The components of `merge(tsource, fsource, mask)` (`args`) when
    /// both sources are structures of one type; `None` when they are not
    /// structures, or an argument is given by keyword.
    pub(super) fn struct_merge(
        &mut self,
        name: &Name,
        args: &[Arg],
    ) -> R<Option<(StructDecl, Vec<Expr>)>> {
        if name.text != "merge"
            || args.len() != 3
            || args.iter().any(|a| a.keyword.is_some())
            || !self.names_intrinsic(name)
        {
            return Ok(None);
        }
        let (ArgValue::Expr(t), ArgValue::Expr(f), ArgValue::Expr(mask)) =
            (&args[0].value, &args[1].value, &args[2].value)
        else {
            return Ok(None);
        };
        // Structure variables and elements only (a function reference is
        // not called here).
        for x in [t, f] {
            let (ExprKind::Name(n) | ExprKind::Apply { name: n, .. }) = &x.kind else {
                return Ok(None);
            };
            if !matches!(self.resolve(n)?, Resolved::Struct(_)) {
                return Ok(None);
            }
        }
        let Some((st, tl)) = self.struct_ref(t, false)? else {
            return Ok(None);
        };
        let Some((sf, fl)) = self.struct_ref(f, false)? else {
            return Ok(None);
        };
        if st.type_name != sf.type_name || tl.len() != fl.len() {
            return Err(self.err(
                f.span,
                format!(
                    "the sources of MERGE differ in type (`{}` and `{}`)",
                    st.type_name, sf.type_name
                ),
            ));
        }
        let arg = |e: Expr| Arg::positional(e);
        let leaves = tl
            .into_iter()
            .zip(fl)
            .map(|(a, b)| Expr {
                kind: ExprKind::Apply {
                    name: name.clone(),
                    args: vec![arg(a), arg(b), arg(mask.clone())],
                },
                span: name.span,
            })
            .collect();
        Ok(Some((st, leaves)))
    }
}
