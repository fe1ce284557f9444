//! Operator and assignment interfaces over derived types.
//!
//! `interface operator(+)`, `interface operator(.dot.)` and
//! `interface assignment(=)` are generic interfaces named `operator(+)`,
//! `operator(.dot.)` and `assignment(=)` (see
//! [`operator_generic`](super::super::ast::operator_generic)). The parser
//! turns a defined operator (`a .dot. b`) into a reference to its generic;
//! here, before a statement is lowered, an intrinsic operator with a
//! structure operand becomes a reference to the generic of that operator
//! when one is visible (`a + b` is `operator(+)(a, b)`), and an assignment
//! to a structure a CALL of the `assignment(=)` specific matching both
//! sides. The generic is then resolved to its specific by the argument
//! types like any generic reference, a specific returning a structure
//! giving a temporary structure.

use super::super::ast::{
    operator_generic, Arg, Expr, ExprKind, Name, Stmt, StmtKind, UnOp, ASSIGNMENT_GENERIC,
};
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::Sym;

impl Lowerer<'_, '_> {
    /// The statement with its operators on structures turned into
    /// references to operator interfaces, and an assignment to a structure
    /// into a call of the assignment interface; `None` when nothing
    /// changes.
    pub(super) fn defined_operators(&mut self, s: &Stmt) -> R<Option<Stmt>> {
        if !self.any_operator_interface() {
            return Ok(None);
        }
        let mut out = s.clone();
        let mut changed = false;
        for e in out.kind.own_exprs_mut() {
            changed |= self.operators_in(e)?;
        }
        if let StmtKind::Assign { target, value } = &out.kind {
            if self.generic(ASSIGNMENT_GENERIC).is_some() && self.struct_type_of(target)?.is_some()
            {
                let name = Name {
                    text: ASSIGNMENT_GENERIC.to_string(),
                    span: target.span,
                };
                let args = vec![
                    Arg::positional(target.clone()),
                    Arg::positional(value.clone()),
                ];
                if self.matching_specific(&name, &args)? {
                    out.kind = StmtKind::Call { name, args };
                    changed = true;
                }
            }
        }
        Ok(changed.then_some(out))
    }

    /// True when an operator or assignment interface is visible.
    fn any_operator_interface(&self) -> bool {
        let own = &self.prog.units[self.unit].scope;
        [Some(own), self.host_scope(), self.module_scope()]
            .into_iter()
            .flatten()
            .any(|s| {
                s.syms.iter().any(|(n, sym)| {
                    matches!(sym, Sym::Generic(_))
                        && (n.starts_with("operator(") || n == ASSIGNMENT_GENERIC)
                })
            })
    }

    /// The specifics of a visible generic interface.
    fn generic(&self, name: &str) -> Option<&[String]> {
        match self.proc_sym(name) {
            Some(Sym::Generic(s)) => Some(s),
            _ => None,
        }
    }

    /// True when a specific of the generic `name` takes `args` (without
    /// reporting an error when none does).
    fn matching_specific(&mut self, name: &Name, args: &[Arg]) -> R<bool> {
        let Some(specifics) = self.generic(&name.text) else {
            return Ok(false);
        };
        let specifics = specifics.to_vec();
        Ok(self.try_specific(name, &specifics, args).is_some())
    }

    /// Rewrites the operators with a structure operand in `e` (innermost
    /// first); true when any was.
    fn operators_in(&mut self, e: &mut Expr) -> R<bool> {
        let mut changed = false;
        for c in e.kind.children_mut() {
            changed |= self.operators_in(c)?;
        }
        let (op, operands) = match &e.kind {
            ExprKind::Binary(op, a, b) => (op.symbol(), vec![&**a, &**b]),
            ExprKind::Unary(UnOp::Neg, a) => ("-", vec![&**a]),
            ExprKind::Unary(UnOp::Plus, a) => ("+", vec![&**a]),
            ExprKind::Unary(UnOp::Not, a) => (".not.", vec![&**a]),
            _ => return Ok(changed),
        };
        let generic = operator_generic(op);
        if self.generic(&generic).is_none() {
            return Ok(changed);
        }
        let mut structure = false;
        for x in &operands {
            structure |= self.struct_type_of(x)?.is_some();
        }
        if !structure {
            return Ok(changed);
        }
        let args = operands.into_iter().cloned().map(Arg::positional).collect();
        e.kind = ExprKind::Apply {
            name: Name {
                text: generic,
                span: e.span,
            },
            args,
        };
        Ok(true)
    }

    /// The derived type of a structure-valued expression: a structure
    /// variable or component, an element of an array of structures, a
    /// reference to a function (or generic) returning a structure;
    /// `None` for anything else.
    pub(super) fn struct_type_of(&mut self, e: &Expr) -> R<Option<String>> {
        let (name, args) = match &e.kind {
            ExprKind::Paren(x) => return self.struct_type_of(x),
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => (name, Some(args)),
            _ => return Ok(None),
        };
        if args.is_some() {
            if let Some(t) = self.find_type(&name.text) {
                return Ok(Some(t.name.clone())); // a structure constructor
            }
        }
        let p = match (self.resolve(name)?, args) {
            (Resolved::Struct(st), _) => return Ok(Some(st.type_name)),
            (Resolved::Generic(specifics), Some(args)) => {
                match self.try_specific(name, specifics, args) {
                    Some(p) => p,
                    None => return Ok(None),
                }
            }
            (Resolved::Proc(p), Some(_)) => p,
            _ => return Ok(None),
        };
        Ok(self.prog.sigs[p]
            .struct_result
            .as_ref()
            .map(|(t, _)| t.clone()))
    }

    /// [`Lowerer::specific`] without its error: `None` when no specific
    /// matches (errors in the arguments are reported when they are
    /// lowered).
    pub(super) fn try_specific(
        &mut self,
        name: &Name,
        specifics: &[String],
        args: &[Arg],
    ) -> Option<usize> {
        let mark = self.out.diags.len();
        let found = self.specific(name, specifics, args).ok();
        self.out.diags.truncate(mark);
        found
    }
}
