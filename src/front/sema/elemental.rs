//! User procedures referenced elementally: `f(x)` with an array `x` given
//! for a scalar dummy of an ELEMENTAL function is an
//! array expression whose elements are calls `f(x(i))`, lowered inside the
//! loops of the enclosing array assignment or reduction; `call s(x, y)` of
//! an ELEMENTAL subroutine is one call per element, `call s(x(i), y(i))`.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::array::ArrayRef;
use super::lowerer::{Lowerer, Resolved, R};
use super::scope::Sym;
use adjit_ir::{CallArg, Inst, Type};

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
        let Some(unit) = self.prog.find_proc(self.unit, &name.text) else {
            return self.elemental_generic_source(name, args);
        };
        self.prog.sigs[unit].result?;
        self.elemental_array_actual(unit, args)
    }

    /// [`Self::elemental_source`] of a generic name whose specifics are
    /// all ELEMENTAL functions (`huber_weight(x - mu, c)` over real32 and
    /// real64 specifics): the specific is chosen per element.
    fn elemental_generic_source<'e>(&self, name: &Name, args: &'e [Arg]) -> Option<ArrayRef<'e>> {
        let Some(Sym::Generic(specifics)) = self.proc_sym(&name.text) else {
            return None;
        };
        let units = specifics
            .iter()
            .map(|s| self.prog.find_proc(self.unit, s))
            .collect::<Option<Vec<usize>>>()?;
        let sigs = &self.prog.sigs;
        if !units
            .iter()
            .all(|&u| sigs[u].elemental && sigs[u].result.is_some())
        {
            return None;
        }
        units
            .into_iter()
            .find_map(|u| self.elemental_array_actual(u, args))
    }

    /// The first array actual given for a scalar dummy of the ELEMENTAL
    /// procedure `unit` (`None` when it is not ELEMENTAL or has none).
    pub(super) fn elemental_array_actual<'e>(
        &self,
        unit: usize,
        args: &'e [Arg],
    ) -> Option<ArrayRef<'e>> {
        let sig = &self.prog.sigs[unit];
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

impl Lowerer<'_, '_> {
    /// The actual argument of an elemental reference at the current
    /// element (`self.elem`) given by reference, so that an INTENT(OUT) or
    /// INTENT(INOUT) dummy of an ELEMENTAL subroutine writes it: the element
    /// of a whole array or of a section of type `pty`. `None` for other
    /// actuals (array expressions, evaluated at the element by value).
    pub(super) fn element_actual(&mut self, e: &Expr, pty: Type) -> R<Option<CallArg>> {
        let Some(pos) = self.elem.clone() else {
            return Ok(None);
        };
        let (name, args) = match &e.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args }
                if self.is_array_name(&name.text)
                    && args
                        .iter()
                        .any(|a| matches!(a.value, ArgValue::Range { .. })) =>
            {
                (name, Some(args))
            }
            _ => return Ok(None),
        };
        let Resolved::Var(v) = self.resolve(name)? else {
            return Ok(None);
        };
        let var = self.proc.var(v);
        if !var.is_array() || var.ty != pty {
            return Ok(None);
        }
        let idx = match args {
            None => self.whole_array_index(v, &pos, name.span)?,
            Some(a) => self.section_index(v, a, &pos, name)?,
        };
        Ok(Some(CallArg::Elem(v, idx)))
    }

    /// `call s(...)` of an ELEMENTAL subroutine `unit` given arrays for
    /// scalar dummies: one call per element of the first such array (in
    /// array element order), each actual taken at that element (arrays and
    /// sections by reference, array expressions by value, scalars as
    /// they are). `Ok(false)` when the call is not elemental.
    pub(super) fn elemental_call(&mut self, unit: usize, name: &Name, args: &[Arg]) -> R<bool> {
        let Some(src) = self.elemental_array_actual(unit, args) else {
            return Ok(false);
        };
        let extents = self.extents(&src)?;
        self.for_positions(&extents, &mut |this, pos| {
            let saved = this.elem.replace(pos.to_vec());
            let r = this.call_args_copied(unit, name, args);
            this.elem = saved;
            let (call_args, callee, copies) = r?;
            if let Some(callee) = callee {
                this.emit(Inst::Call(callee, call_args), None);
            }
            this.copy_back_after(copies)
        })?;
        Ok(true)
    }
}

/// The rank of parameter `p` of a signature.
fn d_rank(sig: &super::Sig, p: usize) -> usize {
    sig.params[p].1
}
