//! Sections of arrays of structures whose type has ALLOCATABLE array
//! components as actual arguments: `call smooth(cells(2:n-1))` with
//! `real(8), allocatable :: u(:)` in the type of `cells`.
//!
//! Such a component is stored as two leaves (`sema::ragged`): the status
//! and bounds of every element (`cells%u.bounds`, an integer array passed
//! as any leaf section is, see `sema::struct_section`) and the storage
//! (`cells%u.data`). The callee takes the storage by descriptor, since its
//! ALLOCATE of an element may grow it, so a section of the storage cannot
//! be passed in place. It goes through an ALLOCATABLE temporary instead:
//!
//! - before the call, when the storage is allocated, the temporary is
//!   allocated with the storage's extents in the component's dimensions
//!   and the section's extents in the structures' ones, and takes the
//!   section (`cells%u.data(:, 2:n-1)`); otherwise it stays unallocated;
//! - the temporary is passed for the storage dummy, which the callee may
//!   allocate or grow as its own;
//! - after the call, when the temporary is allocated, the storage is
//!   grown to its extents in the component's dimensions when they are
//!   larger (or allocated, keeping every element's values, see
//!   `Lowerer::ragged_grow`), takes the temporary back at the section's
//!   positions, and the temporary is released.
//!
//! Everything is ordinary IR (ALLOCATE, copies, DEALLOCATE), so tangents
//! and adjoints follow as for any allocatable temporary.

use super::super::ast::{Expr, ExprKind, Name};
use super::array::ArrayRef;
use super::lowerer::{ArgTemp, CopyBack, Lowerer, R};
use super::scope::{bounds_name, data_name};
use super::struct_section::full_range;
use adjit_ir::{BinaryOp, Inst, Span, Type, UnaryOp, Value, VarId};

impl Lowerer<'_, '_> {
    /// Prepares the temporary of the leaf section `x` of an actual argument
    /// (see the module documentation) when it is a section of the storage
    /// of an ALLOCATABLE component of an array of structures; false for any
    /// other leaf.
    pub(super) fn prepare_storage_section(&mut self, x: &Expr) -> R<bool> {
        let ExprKind::Apply { name, args } = &x.kind else {
            return Ok(false);
        };
        let Some(rg) = name
            .text
            .strip_suffix(".data")
            .and_then(|component| self.ragged(component))
        else {
            return Ok(false);
        };
        if self.arg_temps.iter().any(|t| t.is_for(x)) {
            return Ok(true);
        }
        let span = x.span;
        let data = self.ragged_var(data_name(&rg.name), span)?;
        // The structures' subscripts, read on the bounds leaf (allocated
        // with the structures, unlike the storage).
        let bounds = Name {
            text: bounds_name(&rg.name),
            span,
        };
        let bv = self.ragged_var(bounds.text.clone(), span)?;
        let mut bounds_args = vec![full_range()];
        bounds_args.extend(args[rg.rank..].iter().cloned());
        let mut sel = self.section_sel(bv, &bounds_args)?;
        sel.remove(0);
        let mut extents = self.extents(&ArrayRef {
            name: &bounds,
            args: Some(&bounds_args),
            call: None,
        })?;
        extents.remove(0);
        let ty = self.proc.var(data).ty;
        let temp = self.unallocated_temp(ty, rg.rank + extents.len());
        let copy = CopyBack {
            temp,
            var: data,
            sel,
            extents,
        };
        let is = self.val(Inst::Allocated(data), Type::Bool);
        let unallocated = self.val(Inst::Unary(UnaryOp::Not, is), Type::Bool);
        self.unless(unallocated, |this| {
            let widths = this.own_extents_of(data, rg.rank);
            this.copy_storage(&copy, &widths, span, true)
        })?;
        self.arg_temps.push(ArgTemp {
            expr: x,
            temp,
            back: None,
            storage: Some(copy),
        });
        Ok(true)
    }

    /// After the call: the storage takes back the temporary `c` of a
    /// storage section, when the call left it allocated (see the module
    /// documentation), and the temporary is released.
    pub(super) fn storage_copy_back(&mut self, c: &CopyBack) -> R<()> {
        let span = self.span;
        let component = self.proc.var(c.var).name.clone();
        let Some(rg) = component
            .strip_suffix(".data")
            .and_then(|component| self.ragged(component))
        else {
            return Err(self.err(span, format!("`{component}` is not component storage")));
        };
        let bv = self.ragged_var(bounds_name(&rg.name), span)?;
        let is = self.val(Inst::Allocated(c.temp), Type::Bool);
        let unallocated = self.val(Inst::Unary(UnaryOp::Not, is), Type::Bool);
        self.unless(unallocated, |this| {
            let widths = this.own_extents_of(c.temp, rg.rank);
            this.ragged_grow(&rg, bv, &widths, span)?;
            this.copy_storage(c, &widths, span, false)?;
            this.emit(Inst::Deallocate(c.temp), None);
            Ok(())
        })
    }

    /// The extents of the first `rank` dimensions of the allocated `v`, in
    /// I64 temporaries (readable from later blocks).
    fn own_extents_of(&mut self, v: VarId, rank: usize) -> Vec<VarId> {
        (0..rank)
            .map(|d| {
                let n = self.val(Inst::DimExtent(v, d as u32), Type::I64);
                let t = self.temp("n", Type::I64);
                self.emit(Inst::Store(t, n), None);
                t
            })
            .collect()
    }

    /// Copies the section `c` of a component's storage (the component's
    /// dimensions `widths` wide) into its temporary (`into_temp`, which is
    /// allocated first) or back.
    fn copy_storage(
        &mut self,
        c: &CopyBack,
        widths: &[VarId],
        span: Span,
        into_temp: bool,
    ) -> R<()> {
        let all: Vec<VarId> = widths.iter().chain(&c.extents).copied().collect();
        if into_temp {
            self.allocate_from_one(c.temp, &all);
        }
        let (temp, data, own) = (c.temp, c.var, widths.len());
        let ty = self.proc.var(data).ty;
        self.for_positions(&all, &mut |this, pos| {
            let at_temp = this.whole_array_index(temp, pos, span)?;
            // The component's dimensions from their lower bounds.
            let mut at_data: Vec<Value> = (0..own)
                .map(|d| {
                    let lo = this.val(Inst::DimLower(data, d as u32), Type::I64);
                    this.val(Inst::Binary(BinaryOp::Add, lo, pos[d]), Type::I64)
                })
                .collect();
            at_data.extend(this.selected_index(&c.sel, &pos[own..]));
            let (from, to) = if into_temp {
                ((data, at_data), (temp, at_temp))
            } else {
                ((temp, at_temp), (data, at_data))
            };
            let x = this.val(Inst::LoadElem(from.0, from.1), ty);
            this.emit(Inst::StoreElem(to.0, to.1, x), None);
            Ok(())
        })
    }
}
