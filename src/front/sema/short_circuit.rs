//! Branching on a condition, with `.and.` and `.or.` short-circuited where
//! their second operand may fail.
//!
//! Fortran leaves the extent of evaluation of a logical expression to the
//! processor. gfortran evaluates both operands of `.and.` and `.or.` (a
//! function with a side effect is called even when the first operand
//! decides) and reads memory without checks, so code in the wild writes
//! `do while (i <= n .and. x(i) < t)`, reading `x(n+1)` and discarding
//! it. Here every element reference is checked, so that read would be a
//! located runtime error where gfortran runs. The condition of an IF,
//! ELSE IF, logical IF or DO WHILE therefore becomes branches when the
//! second operand of an `.and.` / `.or.` may fail (it references array
//! elements, takes substrings, reads ALLOCATABLE or OPTIONAL variables or
//! calls an intrinsic that can fail) and calls no procedure, which keeps
//! gfortran's results and side effects. A condition of scalars only
//! keeps its one value (no blocks added for the AD transforms and the JIT
//! to carry). Each operand is evaluated in its own block, so no value
//! crosses a block.

use super::super::ast::{ArgValue, BinOp, Expr, ExprKind, UnOp};
use super::lowerer::{Lowerer, R};
use adjit_ir::{BlockId, Terminator};

/// Intrinsic functions that cannot fail on scalar operands that cannot
/// (no integer division, no subscript, no allocation status read).
const SAFE_INTRINSICS: &[&str] = &[
    "abs", "min", "max", "sign", "dble", "real", "int", "nint", "sqrt", "exp", "log", "sin", "cos",
    "tan", "atan", "atan2", "huge", "tiny", "epsilon",
];

/// What evaluating an expression may do beyond computing its value.
#[derive(Clone, Copy, Default)]
struct Effects {
    /// It may fail: an element or substring reference out of range, an
    /// unallocated or absent variable read, an intrinsic's error.
    fails: bool,
    /// It calls a procedure (which may have side effects, so it must be
    /// called as gfortran calls it).
    calls: bool,
}

impl Effects {
    fn and(self, other: Effects) -> Effects {
        Effects {
            fails: self.fails || other.fails,
            calls: self.calls || other.calls,
        }
    }

    /// Worth evaluating only when needed: it may fail and calls nothing.
    fn guarded(self) -> bool {
        self.fails && !self.calls
    }
}

impl Lowerer<'_, '_> {
    /// Ends the current block with a branch to `then_dest` when the
    /// logical expression `cond` is true and to `else_dest` otherwise,
    /// evaluating the second operand of an `.and.` / `.or.` only when the
    /// first does not decide, where that operand may fail and calls no
    /// procedure.
    pub(super) fn branch_on(
        &mut self,
        cond: &Expr,
        then_dest: BlockId,
        else_dest: BlockId,
    ) -> R<()> {
        match &cond.kind {
            ExprKind::Paren(inner) => return self.branch_on(inner, then_dest, else_dest),
            ExprKind::Unary(UnOp::Not, inner) if self.splits(inner) => {
                return self.branch_on(inner, else_dest, then_dest)
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), first, second) if self.splits(cond) => {
                let rest = self.block();
                let (on_true, on_false) = match op {
                    BinOp::And => (rest, else_dest),
                    _ => (then_dest, rest),
                };
                self.branch_on(first, on_true, on_false)?;
                self.switch_to(rest);
                return self.branch_on(second, then_dest, else_dest);
            }
            _ => {}
        }
        self.hoist(cond)?;
        let c = self.logical(cond)?;
        self.terminate(Terminator::Branch {
            cond: c,
            then_dest,
            else_dest,
        });
        Ok(())
    }

    /// Whether `e`, through parentheses, `.not.`, `.and.` and `.or.`, is
    /// an `.and.` / `.or.` to branch on: its second operand is
    /// [guarded](Effects::guarded), or its first operand is one to branch
    /// on and its second calls no procedure.
    fn splits(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Paren(inner) | ExprKind::Unary(UnOp::Not, inner) => self.splits(inner),
            ExprKind::Binary(BinOp::And | BinOp::Or, first, second) => {
                let second = self.effects(second);
                second.guarded() || (!second.calls && self.splits(first))
            }
            _ => false,
        }
    }

    /// What evaluating `e` may do: fail (an array element, section or
    /// substring reference, a read of an ALLOCATABLE or OPTIONAL variable,
    /// a component or a variable of another scope, an intrinsic other than
    /// the [`SAFE_INTRINSICS`]) and call procedures (any other function
    /// reference, array constructors conservatively).
    fn effects(&self, e: &Expr) -> Effects {
        let fails = Effects {
            fails: true,
            calls: false,
        };
        match &e.kind {
            ExprKind::Int { .. }
            | ExprKind::Real { .. }
            | ExprKind::Logical(_)
            | ExprKind::Str(_) => Effects::default(),
            // A variable of another scope (a module's, a host's) may be
            // ALLOCATABLE too.
            ExprKind::Name(n) => {
                let plain = !n.text.contains('%')
                    && self
                        .u()
                        .scope
                        .var(&n.text)
                        .is_some_and(|v| v.allocatable.is_none() && !v.optional);
                if plain {
                    Effects::default()
                } else {
                    fails
                }
            }
            ExprKind::Unary(_, x) | ExprKind::Paren(x) => self.effects(x),
            ExprKind::Binary(_, a, b) => self.effects(a).and(self.effects(b)),
            ExprKind::Apply { name, args } => {
                let array = self.is_array_name(&name.text);
                let intrinsic = !array && self.names_intrinsic(name);
                if intrinsic && matches!(name.text.as_str(), "present" | "allocated") {
                    // Their argument is not read.
                    return Effects::default();
                }
                let own = if array || (intrinsic && !SAFE_INTRINSICS.contains(&name.text.as_str()))
                {
                    fails
                } else if intrinsic {
                    Effects::default()
                } else {
                    Effects {
                        fails: true,
                        calls: true,
                    }
                };
                args.iter().fold(own, |acc, a| match &a.value {
                    ArgValue::Expr(x) => acc.and(self.effects(x)),
                    ArgValue::Range { lo, hi, stride } => [lo, hi, stride]
                        .into_iter()
                        .flatten()
                        .fold(acc.and(fails), |acc, x| acc.and(self.effects(x))),
                })
            }
            ExprKind::Substring { base, start, end } => [start, end]
                .into_iter()
                .flatten()
                .fold(self.effects(base).and(fails), |acc, x| {
                    acc.and(self.effects(x))
                }),
            ExprKind::ArrayConstructor(_)
            | ExprKind::CharArrayConstructor { .. }
            | ExprKind::ImpliedDo { .. } => Effects {
                fails: true,
                calls: true,
            },
        }
    }
}
