//! User functions referenced elementally: `f(x)` with an array `x` given
//! for a scalar dummy of an ELEMENTAL function is an
//! array expression whose elements are calls `f(x(i))`, lowered inside the
//! loops of the enclosing array assignment or reduction.

use super::super::ast::{Arg, ArgValue, Expr, Name};
use super::array::ArrayRef;
use super::lowerer::Lowerer;

impl Lowerer<'_, '_> {
    /// The first array operand of `name(args)` when it is an ELEMENTAL user
    /// function referenced elementally (an array-valued actual for a scalar
    /// dummy). For any other function such an actual is a rank mismatch,
    /// reported where the argument is lowered.
    pub(super) fn elemental_source<'e>(
        &self,
        name: &Name,
        args: &'e [Arg],
    ) -> Option<ArrayRef<'e>> {
        if self.is_array_name(&name.text) || self.vars.contains_key(&name.text) {
            return None;
        }
        let unit = self.prog.find_proc(self.unit, &name.text)?;
        let sig = &self.prog.sigs[unit];
        sig.result?;
        if !sig.elemental {
            return None;
        }
        for (i, a) in args.iter().enumerate() {
            let ArgValue::Expr(x) = &a.value else {
                continue;
            };
            let dummy = match &a.keyword {
                Some(k) => sig.dummies.iter().find(|d| d.name == k.text),
                None => sig.dummies.get(i),
            };
            let Some(&p) = dummy.and_then(|d| d.params.first()) else {
                continue;
            };
            if d_rank(sig, p) == 0 {
                if let Some(src) = self.array_source(x) {
                    return Some(src);
                }
            }
        }
        None
    }

    /// True when `name(args)` is a user function referenced elementally.
    pub(super) fn is_elemental_use(&self, name: &Name, args: &[Arg]) -> bool {
        self.elemental_source(name, args).is_some()
    }

    /// True when an actual argument is an array expression evaluated
    /// element by element (inside an elemental reference).
    pub(super) fn elementwise_actual(&self, e: &Expr, prank: usize) -> bool {
        prank == 0 && self.elem.is_some() && self.array_source(e).is_some()
    }
}

/// The rank of parameter `p` of a signature.
fn d_rank(sig: &super::Sig, p: usize) -> usize {
    sig.params[p].1
}
