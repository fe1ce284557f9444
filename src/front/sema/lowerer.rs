//! The per-procedure lowering state: the IR procedure being built, the
//! current block, the variables created so far, and name resolution.
//!
//! It owns the state and the vocabulary (`Operand`, `Resolved`) the other
//! lowering modules share, and procedure entry (parameters, bounds, DATA);
//! statements and expressions are lowered by [`super::stmt`] and
//! [`super::expr`].

use super::super::ast::{
    AdfEntry, Arg, ArgValue, DimSpec, Expr, ExprKind, Name, ProcKind, Procedure, Stmt, StmtKind,
};
use super::super::diag::literal_bytes;
use super::super::diag::Diagnostic;
use super::consts::{fold, fold_elements, ConstVal, MAX_INITIAL_VALUES};
use super::expr_table::ExprTable;
use super::scope::{CharLenInfo, DerivedType, Scope, StmtFn, StructDecl, Sym, TypeInfo, VarDecl};
use super::Target;
use super::{Program, Unit};
use adjit_ir::{
    Block, BlockId, Bound, CharRef, Const, Dim, Global, Inst, Proc, Span, Storage, Terminator,
    Type, Value, Var, VarId,
};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// One lowered ADF / ADR block: calls of `callee` in procedure `host` to be
/// replaced by calls of derivative procedures.
#[derive(Clone, Debug, PartialEq)]
pub struct AdfCall {
    /// ADR (two calls: forward sweep, reverse sweep) or ADF (one call: the
    /// tangent).
    pub reverse: bool,
    /// The IR name of the procedure holding the calls.
    pub host: String,
    /// The outlined subroutine (called only from this block).
    pub callee: adjit_ir::ProcId,
    /// Derivative variables of `host`, by parameter index of `callee`, for
    /// every real parameter (scalar or array, not assumed-size): each holds the seed (or zero) before
    /// the differentiated call and the derivative after it.
    pub derivatives: Vec<(usize, VarId)>,
    /// Parameter indices of `callee` whose variables an ADR block saves
    /// after its forward phase and restores after its reverse phase
    /// (every one it uses but assumed-size arrays and constants).
    pub saved: Vec<usize>,
    /// Parameter indices of `callee` that are independents.
    pub independents: Vec<usize>,
    /// Parameter indices of `callee` that are dependents.
    pub dependents: Vec<usize>,
    /// Where the block is.
    pub span: Span,
}

/// State shared by all procedures: globals created so far and diagnostics.
#[derive(Default)]
pub(crate) struct Out {
    /// Globals, indexed by `GlobalId`.
    pub globals: Vec<Global>,
    /// Errors and warnings.
    pub diags: Vec<Diagnostic>,
    /// The ADF blocks lowered.
    pub adf: Vec<AdfCall>,
    /// The globals holding array PARAMETERs (read-only).
    pub constants: BTreeSet<adjit_ir::GlobalId>,
    /// The globals holding PRIVATE module entities.
    pub private: BTreeSet<adjit_ir::GlobalId>,
    /// The globals holding PROTECTED module variables.
    pub protected: BTreeSet<adjit_ir::GlobalId>,
}

impl Out {
    /// Adds a global, remembering it as read-only if it holds an array
    /// PARAMETER.
    pub fn push_global(&mut self, g: Global, constant: bool) -> adjit_ir::GlobalId {
        self.globals.push(g);
        let id = adjit_ir::GlobalId(self.globals.len() as u32 - 1);
        if constant {
            self.constants.insert(id);
        }
        id
    }
    /// Runs `f` with diagnostics going to `sink` instead.
    pub fn with_diags<T>(
        &mut self,
        sink: &mut Vec<Diagnostic>,
        f: impl FnOnce(&mut Out) -> T,
    ) -> T {
        std::mem::swap(&mut self.diags, sink);
        let r = f(self);
        std::mem::swap(&mut self.diags, sink);
        r
    }
    /// Runs `f`, with diagnostics going to `sink` when one is given.
    pub fn maybe_with_diags<T>(
        &mut self,
        sink: Option<&mut Vec<Diagnostic>>,
        f: impl FnOnce(&mut Out) -> T,
    ) -> T {
        match sink {
            Some(s) => self.with_diags(s, f),
            None => f(self),
        }
    }
}

/// Marker: an error has been reported to the diagnostics.
#[derive(Debug)]
pub(crate) struct Reported;

/// Result of a lowering step.
pub(crate) type R<T> = Result<T, Reported>;

/// The value of an expression.
pub(crate) enum Operand {
    /// A numeric or logical SSA value.
    Num(Value, Type),
    /// Character data.
    Char(CharRef),
}

/// What a name means at a point of a procedure.
pub(crate) enum Resolved<'p> {
    /// A statement-function dummy bound to a value.
    Value(Value, Type),
    /// A variable.
    Var(VarId),
    /// A named constant.
    Const(ConstVal),
    /// A statement function.
    StmtFunc(&'p StmtFn),
    /// A user procedure (unit index).
    Proc(usize),
    /// A variable of derived type.
    Struct(StructDecl),
    /// A generic interface name: its specific procedures' names.
    Generic(&'p [String]),
    /// A dummy procedure, and what it stands for in this instance.
    Dummy(Target),
    /// Nothing known: an implicit variable, an intrinsic or an error.
    Unknown,
}

/// A DO or DO WHILE construct being lowered.
pub(crate) struct LoopFrame {
    /// Construct name.
    pub name: Option<String>,
    /// Where CYCLE goes.
    pub cycle: BlockId,
    /// Where EXIT goes.
    pub exit: BlockId,
    /// True for a DO construct; false for a named BLOCK construct, which
    /// only an EXIT naming it leaves (CYCLE and an EXIT without a name
    /// belong to DO constructs).
    pub is_do: bool,
}

/// One dimension of a section whose subscripts were evaluated once.
#[derive(Clone, Copy)]
pub(crate) enum Sel {
    /// A scalar subscript (I64 temporary).
    At(VarId),
    /// A triplet: first subscript and stride (I64 temporaries).
    Range { lo: VarId, stride: VarId },
}

/// A section copied into a temporary (by the section_arg module), to
/// copy back after the call.
pub(crate) struct CopyBack {
    /// The temporary.
    pub temp: VarId,
    /// The array.
    pub var: VarId,
    /// The section's subscripts.
    pub sel: Vec<Sel>,
    /// The section's extents (I64 temporaries).
    pub extents: Vec<VarId>,
}

/// How an array-valued intrinsic reference is lowered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Transform {
    /// Its argument read at another position.
    Positional,
    /// A loop per element, into a scalar temporary.
    Looped,
}

/// Where the arguments of a positional intrinsic are read for the element
/// being computed (temporaries filled by `Lowerer::at_element` (the transform module)).
#[derive(Clone, Debug)]
pub(crate) struct Mapped {
    /// The position in the (first) argument; empty for a scalar argument.
    pub pos: Vec<VarId>,
    /// EOSHIFT / RESHAPE with PAD=: true when the element comes from the
    /// argument (else from BOUNDARY= or PAD=).
    pub inside: Option<VarId>,
    /// RESHAPE with PAD=: the position in PAD.
    pub pad: Vec<VarId>,
}

/// The leaf sections made for one section of an array of structures given
/// as an actual argument (`super::struct_section`).
pub(crate) struct StructSection {
    /// The actual argument (its address is the key).
    pub(super) key: *const Expr,
    /// The actual argument as it was (a stale address is not reused).
    pub(super) expr: Expr,
    /// The structure it is a section of.
    pub(super) decl: StructDecl,
    /// One actual argument per leaf, in the order of the leaves.
    pub(super) leaves: Rc<Vec<Arg>>,
}

/// A temporary prepared for an actual argument (by the section_arg
/// module).
pub(crate) struct ArgTemp {
    /// The argument expression.
    pub expr: *const Expr,
    /// The temporary (rank 1, exactly the argument's size).
    pub temp: VarId,
    /// The section to copy back after the call.
    pub back: Option<CopyBack>,
    /// The section of the storage of an ALLOCATABLE component of an array
    /// of structures to copy back after the call (`sema::ragged_arg`): the
    /// temporary has the component's dimensions first and may have been
    /// left unallocated, or grown, by the call.
    pub storage: Option<CopyBack>,
}

impl ArgTemp {
    /// True when the temporary was prepared for `e`.
    pub(crate) fn is_for(&self, e: &Expr) -> bool {
        std::ptr::eq(self.expr, e)
    }
}

/// The lowering state of one procedure.
pub(crate) struct Lowerer<'p, 'a> {
    /// The whole program (units, modules, signatures).
    pub prog: &'p Program<'a>,
    /// Globals and diagnostics.
    pub out: &'p mut Out,
    /// The unit being lowered.
    pub unit: usize,
    /// The instance being lowered (binds the unit's dummy procedures);
    /// `None` for a template lowered for its diagnostics.
    pub inst: Option<usize>,
    /// The procedure being built.
    pub proc: Proc,
    /// Variables created so far, by name.
    pub vars: HashMap<String, VarId>,
    /// The block instructions go to.
    pub cur: BlockId,
    /// True after a terminator: the next instruction starts a new
    /// (unreachable unless jumped to) block.
    pub dead: bool,
    /// The span given to new instructions (the current statement's).
    pub span: Span,
    /// The block of every statement label.
    pub labels: HashMap<u32, BlockId>,
    /// Enclosing DO constructs, innermost last.
    pub loops: Vec<LoopFrame>,
    /// Reductions (and function references) already lowered into
    /// temporaries, by expression (released with their statement).
    pub hoisted: ExprTable<VarId>,
    /// Statement-function dummies bound to values, innermost last.
    pub inline: Vec<HashMap<String, (Value, Type)>>,
    /// Inside an array expression: the 0-based position (I64 values) of
    /// the element being computed.
    pub elem: Option<Vec<Value>>,
    /// Inside a READ statement with IOSTAT=: an item keeps its value when
    /// the statement has failed (the value read is stored conditionally).
    pub io_caught: bool,
    /// Counter for temporary names.
    pub ntemps: u32,
    /// Index in the current block of the current statement's first
    /// instruction (values before it are not reused).
    pub stmt_start: usize,
    /// Temporary structures (structure constructors passed as actual
    /// arguments), by name; their leaves are in `vars`.
    pub temp_structs: HashMap<String, StructDecl>,
    /// Where the arguments of positional array intrinsics are read for
    /// the element being computed (see the transform module).
    pub mapped: ExprTable<Mapped>,
    /// Temporaries prepared for actual arguments of the calls of the
    /// current statement (by the section_arg module).
    pub arg_temps: Vec<ArgTemp>,
    /// Sections of arrays of structures given as actual arguments, one
    /// section per leaf (`super::struct_section`).
    pub struct_sections: Vec<StructSection>,
    /// Syntax rewritten while lowering (statements with array-valued
    /// function references lifted out, `super::array_fn`; ASSOCIATE bodies;
    /// the units of a FORALL), kept for the lowerer's lifetime: expressions
    /// are keyed by address (`hoisted`, `mapped`, `arg_temps`), so freed
    /// syntax would let later syntax reuse its addresses and find its
    /// entries.
    pub lifted: Vec<std::rc::Rc<dyn std::any::Any>>,
    /// The specifics of generic function references that return arrays,
    /// by the position of the reference's name (resolved before a
    /// statement's array-valued function references are lifted,
    /// `super::array_fn`).
    pub generic_array_fns: HashMap<Span, usize>,
    /// The environment parameters of the instance, one group per dummy
    /// procedure (closure conversion, [`super::closure`]).
    pub env: Vec<Vec<VarId>>,
    /// Set just before lowering a call through the dummy procedure at
    /// this position: the call passes its environment group.
    pub via_slot: Option<usize>,
    /// The `!$AD BINOMIAL-CKP` directive (arguments, position) of the DO
    /// statement being lowered, taken by its loop.
    pub pending_checkpoint: Option<(Vec<Expr>, Span)>,
    /// Where the allocation checks of the current statement go (block,
    /// instruction index): see `fail_if_unallocated` (module `alloc`).
    pub check_at: (BlockId, usize),
    /// The arrays checked there already.
    pub checked: Vec<VarId>,
    /// The associate names of the ASSOCIATE constructs being lowered
    /// (`super::associate`).
    pub associated: Substitution,
}

impl<'p, 'a> Lowerer<'p, 'a> {
    /// A lowerer for a unit, with an empty procedure (`inst`: the instance
    /// lowered, `None` for a template lowered for its diagnostics).
    pub fn new(prog: &'p Program<'a>, out: &'p mut Out, unit: usize, inst: Option<usize>) -> Self {
        let u = &prog.units[unit];
        let mut proc = Proc::new(u.ir_name.clone());
        proc.span = u.ast.span;
        proc.module = u.module.map(|m| prog.modules[m].0.clone());
        proc.private = u
            .module
            .is_some_and(|m| !prog.modules[m].1.is_public(&u.ast.name.text));
        Self::resume(prog, out, unit, proc, HashMap::new(), inst)
    }

    /// A lowerer continuing a declared procedure.
    pub fn resume(
        prog: &'p Program<'a>,
        out: &'p mut Out,
        unit: usize,
        mut proc: Proc,
        vars: HashMap<String, VarId>,
        inst: Option<usize>,
    ) -> Self {
        let span = proc.span;
        if let Some(i) = inst {
            proc.name = prog.instances.borrow()[i].name.clone();
        }
        Lowerer {
            prog,
            out,
            unit,
            inst,
            proc,
            vars,
            cur: Proc::ENTRY,
            dead: false,
            span,
            labels: HashMap::new(),
            loops: Vec::new(),
            hoisted: ExprTable::default(),
            mapped: ExprTable::default(),
            inline: Vec::new(),
            elem: None,
            io_caught: false,
            ntemps: 0,
            stmt_start: 0,
            temp_structs: HashMap::new(),
            arg_temps: Vec::new(),
            struct_sections: Vec::new(),
            lifted: Vec::new(),
            generic_array_fns: HashMap::new(),
            env: Vec::new(),
            via_slot: None,
            pending_checkpoint: None,
            check_at: (Proc::ENTRY, 0),
            checked: Vec::new(),
            associated: HashMap::new(),
        }
    }

    /// The procedure and its name map after `declare_params`.
    pub fn finish_declaration(self) -> (Proc, HashMap<String, VarId>) {
        (self.proc, self.vars)
    }

    /// The finished procedure.
    pub fn into_proc(self) -> Proc {
        self.proc
    }

    /// The unit being lowered.
    pub fn u(&self) -> &'p Unit<'a> {
        &self.prog.units[self.unit]
    }

    /// Reports an error.
    pub fn err(&mut self, span: Span, msg: impl Into<String>) -> Reported {
        self.out.diags.push(Diagnostic::error(span, msg));
        Reported
    }

    /// Reports an error about the variable `name` of this unit, with a note
    /// at its declaration (when it has one in the source).
    pub fn err_declared(&mut self, span: Span, msg: impl Into<String>, name: &str) -> Reported {
        let mut d = Diagnostic::error(span, msg);
        if let Some(decl) = self.u().scope.var(name).filter(|d| d.span != span) {
            d = d.with_note(decl.span, format!("`{name}` declared here"));
        }
        self.out.diags.push(d);
        Reported
    }

    // ----- instruction emission -------------------------------------------

    /// Appends an instruction to the current block, unless the current
    /// statement already computed the same value in this block (then that
    /// value is reused: loads are reused only when no store to the variable
    /// and no call came in between).
    pub fn emit(&mut self, inst: Inst, ty: Option<Type>) -> Value {
        if self.dead {
            self.cur = self.proc.add_block();
            self.dead = false;
            self.stmt_start = 0;
            self.check_here();
        }
        if let Some(x) = self.reusable(&inst, ty) {
            return x;
        }
        if let Inst::Allocate(v, _) = &inst {
            // Allocated by this statement: no allocation check before it.
            self.checked.push(*v);
        }
        self.proc.push_inst(self.cur, inst, ty, self.span)
    }

    fn reusable(&self, inst: &Inst, ty: Option<Type>) -> Option<Value> {
        ty?;
        if matches!(
            inst,
            Inst::Pop(_)
                | Inst::CharCompare(..)
                | Inst::CharLen(..)
                | Inst::CharIndex(..)
                | Inst::CharSearch(..)
                | Inst::Io(_)
        ) {
            return None;
        }
        let reads = match inst {
            Inst::Load(v) | Inst::LoadElem(v, _) => Some(*v),
            _ => None,
        };
        let block = &self.proc.blocks[self.cur.index()];
        let start = self.stmt_start.min(block.insts.len());
        for &x in block.insts[start..].iter().rev() {
            let d = &self.proc.insts[x.index()];
            if d.ty == ty && same_inst(&d.kind, inst) {
                return Some(x);
            }
            if let Some(v) = reads {
                match &d.kind {
                    Inst::Store(w, _) | Inst::StoreElem(w, ..) if *w == v => return None,
                    Inst::Call(..) | Inst::CharAssign(..) => return None,
                    _ => {}
                }
            }
        }
        None
    }

    /// Marks the start of a statement: values computed before it are not
    /// reused.
    pub fn start_statement(&mut self) {
        self.stmt_start = self.proc.blocks[self.cur.index()].insts.len();
    }

    /// Appends a value-producing instruction.
    pub fn val(&mut self, inst: Inst, ty: Type) -> Value {
        self.emit(inst, Some(ty))
    }

    /// A constant.
    pub fn konst(&mut self, c: Const, ty: Type) -> Value {
        self.val(Inst::Const(c), ty)
    }

    /// An integer constant.
    pub fn int(&mut self, v: i64, ty: Type) -> Value {
        self.konst(Const::Int(v), ty)
    }

    /// The constant an instruction defines, if it is a constant.
    pub fn const_of(&self, v: Value) -> Option<Const> {
        match self.proc.inst(v).kind {
            Inst::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Converts a value between numeric types (constants are folded).
    pub fn convert(&mut self, v: Value, from: Type, to: Type) -> Value {
        if from == to {
            return v;
        }
        if let Some(c) = self.const_of(v) {
            let cv = match c {
                Const::Int(i) => ConstVal::Int(i, from),
                Const::Float(f) => ConstVal::Real(f, from),
                Const::Bool(b) => ConstVal::Bool(b),
                Const::Char(_) => ConstVal::Str(String::new()),
            };
            if let Some(k) = cv.convert(to).and_then(|c| c.to_ir()) {
                return self.konst(k, to);
            }
        }
        self.val(Inst::Convert(v, adjit_ir::Rounding::Trunc), to)
    }

    /// A fresh local scalar temporary.
    pub fn temp(&mut self, prefix: &str, ty: Type) -> VarId {
        self.ntemps += 1;
        let name = format!("_{}{}", prefix, self.ntemps);
        self.proc.add_var(Var::scalar(name, ty))
    }

    /// Ends the current block.
    pub fn terminate(&mut self, term: Terminator) {
        if self.dead {
            return;
        }
        let b = &mut self.proc.blocks[self.cur.index()];
        b.term = term;
        b.term_span = self.span;
        self.dead = true;
    }

    /// Ends the current block with a jump.
    pub fn jump(&mut self, to: BlockId) {
        self.terminate(Terminator::Jump(to));
    }

    /// Continues in a block.
    pub fn switch_to(&mut self, b: BlockId) {
        self.cur = b;
        self.dead = false;
        self.start_statement();
        self.check_here();
    }

    /// A new empty block.
    pub fn block(&mut self) -> BlockId {
        self.proc.blocks.push(Block::default());
        BlockId(self.proc.blocks.len() as u32 - 1)
    }

    // ----- names ------------------------------------------------------------

    /// The scope of the enclosing module, if any.
    pub fn module_scope(&self) -> Option<&'p Scope> {
        let prog = self.prog;
        prog.units[self.unit].module.map(|m| &prog.modules[m].1)
    }

    /// The host scope of an internal procedure.
    pub fn host_scope(&self) -> Option<&'p Scope> {
        let prog = self.prog;
        prog.units[self.unit].host.map(|h| &prog.units[h].scope)
    }

    /// The declaration of a variable visible by name (own, host, module).
    pub fn visible_decl(&self, name: &str) -> Option<(&'p Scope, &'p VarDecl)> {
        match self.visible_sym(name)? {
            (s, Sym::Var(v)) => Some((s, v)),
            _ => None,
        }
    }

    /// The symbol a name has in the nearest scope declaring it (own, host,
    /// module), with that scope.
    pub fn visible_sym(&self, name: &str) -> Option<(&'p Scope, &'p Sym)> {
        [
            Some(&self.u().scope),
            self.host_scope(),
            self.module_scope(),
        ]
        .into_iter()
        .flatten()
        .find_map(|s| s.syms.get(name).map(|sym| (s, sym)))
    }

    /// True when a name denotes an array variable.
    pub fn is_array_name(&self, name: &str) -> bool {
        if self.inline.last().is_some_and(|f| f.contains_key(name)) {
            return false;
        }
        if let Some(&v) = self.vars.get(name) {
            return self.proc.var(v).is_array();
        }
        self.visible_decl(name)
            .is_some_and(|(_, d)| d.dims.is_some())
    }

    /// What a name means (creating its variable on first use).
    pub fn resolve(&mut self, name: &Name) -> R<Resolved<'p>> {
        let n = name.text.as_str();
        if let Some(&(v, t)) = self.inline.last().and_then(|f| f.get(n)) {
            return Ok(Resolved::Value(v, t));
        }
        if let Some(&v) = self.vars.get(n) {
            return Ok(Resolved::Var(v));
        }
        if let Some(st) = self.temp_structs.get(n) {
            return Ok(Resolved::Struct(st.clone()));
        }
        if let Some(t) = self.dummy_target(n) {
            return Ok(Resolved::Dummy(t));
        }
        let scopes = [
            Some(&self.u().scope),
            self.host_scope(),
            self.module_scope(),
        ];
        for (depth, s) in scopes.into_iter().enumerate() {
            let Some(s) = s else { continue };
            match s.syms.get(n) {
                Some(Sym::Var(d)) => {
                    if depth == 1 && d.global.is_none() {
                        // A host variable not passed: only reachable when the
                        // host association analysis missed it.
                        return Err(self.err(
                            name.span,
                            format!("host variable `{n}` is not available here"),
                        ));
                    }
                    return self.create_var(name, s, d).map(Resolved::Var);
                }
                Some(Sym::Const(c)) => return Ok(Resolved::Const(c.clone())),
                Some(Sym::StmtFunc(f)) if depth == 0 => return Ok(Resolved::StmtFunc(f)),
                Some(Sym::External(_)) => {
                    return match self.prog.find_proc(self.unit, n) {
                        Some(p) => Ok(Resolved::Proc(p)),
                        None if self.host_dummy_procedure(n) => Err(self.host_dummy_error(name)),
                        None => Err(self.err(name.span, format!("unknown procedure `{n}`"))),
                    }
                }
                Some(Sym::Struct(st)) => return Ok(Resolved::Struct(st.clone())),
                Some(Sym::Generic(g)) => return Ok(Resolved::Generic(g)),
                Some(Sym::ProcAlias(r)) => {
                    return match self.prog.by_name.get(r) {
                        Some(&p) => Ok(Resolved::Proc(p)),
                        None => Err(self.err(name.span, format!("unknown procedure `{r}`"))),
                    }
                }
                Some(_) => return Ok(Resolved::Unknown),
                None => {}
            }
        }
        if let Some((text, _)) = self.canonical_component(n)? {
            return self.resolve(&Name {
                text,
                span: name.span,
            });
        }
        match self.prog.find_proc(self.unit, n) {
            Some(p) => {
                self.check_visible(p, name)?;
                Ok(Resolved::Proc(p))
            }
            None => Ok(Resolved::Unknown),
        }
    }

    /// Refuses a PRIVATE module procedure referenced outside its module.
    pub fn check_visible(&mut self, p: usize, name: &Name) -> R<()> {
        let callee = &self.prog.units[p];
        if let Some(m) = callee.module {
            let (mname, mscope) = &self.prog.modules[m];
            if callee.host.is_none()
                && self.u().module != Some(m)
                && !mscope.is_public(&callee.ast.name.text)
            {
                return Err(self.err(
                    name.span,
                    format!("`{}` is PRIVATE in module `{mname}`", name.text),
                ));
            }
        }
        Ok(())
    }

    /// A derived type visible by name (own, host, module).
    pub fn find_type(&self, name: &str) -> Option<&'p DerivedType> {
        let own = &self.prog.units[self.unit].scope;
        [Some(own), self.host_scope(), self.module_scope()]
            .into_iter()
            .flatten()
            .find_map(|s| s.types.get(name))
    }

    /// A temporary structure of a derived type (local variables per leaf).
    pub fn temp_struct(&mut self, def: &DerivedType) -> R<(Name, StructDecl)> {
        self.ntemps += 1;
        let name = format!("_s{}", self.ntemps);
        let st = self.temp_struct_named(&name, def, 0)?;
        Ok((
            Name {
                text: name,
                span: self.span,
            },
            st,
        ))
    }

    fn temp_struct_named(&mut self, name: &str, def: &DerivedType, depth: usize) -> R<StructDecl> {
        if depth > 16 {
            return Err(self.err(self.span, "derived types nested too deeply"));
        }
        let mut leaves = Vec::new();
        for c in &def.comps {
            let cname = format!("{name}%{}", c.name);
            match &c.ty {
                super::scope::CompType::Plain(ti) => {
                    let v = self.proc.add_var(Var {
                        name: cname.clone(),
                        ty: ti.ty,
                        dims: Vec::new(),
                        char_len: None,
                        storage: Storage::Local,
                    });
                    self.vars.insert(cname.clone(), v);
                    self.set_shape(v, ti, c.dims.as_deref(), false)?;
                    leaves.push(cname);
                }
                super::scope::CompType::Derived(t) => {
                    let Some(inner) = self.find_type(t) else {
                        return Err(self.err(self.span, format!("unknown derived type `{t}`")));
                    };
                    let sub = self.temp_struct_named(&cname, inner, depth + 1)?;
                    leaves.extend(sub.leaves.iter().cloned());
                    self.temp_structs.insert(cname, sub);
                }
            }
        }
        let st = StructDecl {
            type_name: def.name.clone(),
            leaves,
            dims: None,
        };
        self.temp_structs.insert(name.to_string(), st.clone());
        Ok(st)
    }

    /// The procedure-like symbol a name has in the nearest scope declaring
    /// it (generic names and renamed module procedures).
    pub fn proc_sym(&self, name: &str) -> Option<&'p Sym> {
        let own = &self.prog.units[self.unit].scope;
        [Some(own), self.host_scope(), self.module_scope()]
            .into_iter()
            .flatten()
            .find_map(|s| s.syms.get(name))
            .filter(|s| matches!(s, Sym::Generic(_) | Sym::ProcAlias(_)))
    }

    /// What a dummy procedure of this unit stands for in this instance.
    /// The scopes a procedure sees named constants of beyond its own:
    /// its hosts' (innermost first), then its module's.
    fn outer_scopes(&self) -> Vec<&'p Scope> {
        let prog: &'p Program<'a> = self.prog;
        let mut out = Vec::new();
        let mut u = &prog.units[self.unit];
        while let Some(h) = u.host {
            u = &prog.units[h];
            out.push(&u.scope);
        }
        if let Some(m) = prog.units[self.unit].module {
            out.push(&prog.modules[m].1);
        }
        out
    }

    pub fn dummy_target(&self, name: &str) -> Option<Target> {
        let k = self.u().dummy_procs.iter().position(|d| d.text == name)?;
        Some(match self.inst {
            Some(i) => self.prog.instances.borrow()[i].binding[k].clone(),
            None => Target::Unbound,
        })
    }

    /// True when `name` is a dummy procedure of the host (not visible to
    /// an internal procedure: instances bind their own dummies only).
    pub fn host_dummy_procedure(&self, name: &str) -> bool {
        let prog = self.prog;
        self.u()
            .host
            .is_some_and(|h| prog.units[h].dummy_procs.iter().any(|d| d.text == name))
    }

    /// The error for a host's dummy procedure used in an internal procedure.
    pub fn host_dummy_error(&mut self, name: &Name) -> Reported {
        self.err(
            name.span,
            format!(
                "unsupported Fortran: `{}` is a dummy procedure of the host, not usable in an internal procedure",
                name.text
            ),
        )
    }

    /// The variable a name denotes, creating an implicitly typed local
    /// variable for an unknown name.
    pub fn var_of(&mut self, name: &Name) -> R<VarId> {
        match self.resolve(name)? {
            Resolved::Var(v) => Ok(v),
            Resolved::Unknown | Resolved::Proc(_) => self.implicit_var(name),
            _ => Err(self.err(name.span, format!("`{}` is not a variable", name.text))),
        }
    }

    /// Creates an implicitly typed local scalar.
    pub fn implicit_var(&mut self, name: &Name) -> R<VarId> {
        match self.u().scope.implicit_type(&name.text) {
            Some(ti) => {
                let decl = VarDecl {
                    span: name.span,
                    ty: Some(ti),
                    dims: None,
                    intent: None,
                    save: self.u().scope.save_all,
                    init: None,
                    arg: None,
                    global: None,
                    optional: false,
                    default_init: None,
                    global_at: 0,
                    constant: false,
                    allocatable: None,
                    value: None,
                    component_dims: None,
                    string_buffer: false,
                    fixed_len: None,
                };
                let scope = &self.prog.units[self.unit].scope;
                self.create_var(name, scope, &decl)
            }
            None => Err(self.err(
                name.span,
                format!(
                    "undeclared variable `{}` (IMPLICIT NONE is in effect)",
                    name.text
                ),
            )),
        }
    }

    /// Creates the IR variable of a declared (non-argument) variable.
    fn create_var(&mut self, name: &Name, scope: &Scope, d: &VarDecl) -> R<VarId> {
        let n = &name.text;
        let Some(ti) = d.ty.clone().or_else(|| scope.implicit_type(n)) else {
            return Err(self.err(
                d.span,
                format!("variable `{n}` has no type (IMPLICIT NONE is in effect)"),
            ));
        };
        if let Some(span) = d.allocatable {
            return self.create_allocatable(name, span, &ti, d);
        }
        let storage = if let Some(g) = d.global {
            Storage::Global(g, d.global_at)
        } else if d.arg.is_some() {
            return Err(self.err(
                name.span,
                format!("dummy argument `{n}` is not available here"),
            ));
        } else if d.save || scope.save_all {
            let gname = format!("{}::{}", self.u().save_name, n);
            // Instances of one unit share its SAVE variables.
            let shared = self.out.globals.iter().position(|g| g.name == gname);
            match shared {
                Some(i) => Storage::Global(adjit_ir::GlobalId(i as u32), 0),
                None => {
                    match global_for(scope, &self.outer_scopes(), n, gname, &mut self.out.diags) {
                        Some(g) => Storage::Global(self.out.push_global(g, d.constant), 0),
                        None => return Err(Reported),
                    }
                }
            }
        } else {
            Storage::Local
        };
        let var = self.proc.add_var(Var {
            name: n.clone(),
            ty: ti.ty,
            dims: Vec::new(),
            char_len: None,
            storage,
        });
        self.vars.insert(n.clone(), var);
        self.set_shape(var, &ti, d.dims.as_deref(), false)?;
        self.allocate_if_runtime_sized(var)?;
        Ok(var)
    }

    /// Creates the IR variable of an ALLOCATABLE local array: deferred
    /// shape only, unallocated at entry.
    pub(super) fn create_allocatable(
        &mut self,
        name: &Name,
        attr: Span,
        ti: &TypeInfo,
        d: &VarDecl,
    ) -> R<VarId> {
        let n = &name.text;
        if d.global.is_some() {
            return Err(self.err(
                attr,
                format!("unsupported Fortran: ALLOCATABLE `{n}` in COMMON"),
            ));
        }
        // A deferred-length string is an array of one-character elements
        // (`super::deferred_chars`); other character allocatables are not.
        if ti.ty == Type::Char && ti.char_len != CharLenInfo::Deferred {
            return Err(self.err(
                attr,
                format!("unsupported Fortran: ALLOCATABLE character variable `{n}`"),
            ));
        }
        let dims = d.dims.as_deref().unwrap_or_default();
        if dims.is_empty() {
            return Err(self.err(
                attr,
                format!("unsupported Fortran: ALLOCATABLE scalar `{n}`"),
            ));
        }
        if dims.len() > 7 {
            return Err(self.err(d.span, "arrays have at most 7 dimensions"));
        }
        if !dims
            .iter()
            .all(|x| matches!(x, DimSpec::AssumedShape { lower: None }))
        {
            return Err(self.err(
                d.span,
                format!("ALLOCATABLE array `{n}` must have a deferred shape, `{n}(:)` or `{n}(:, :)`, not explicit bounds"),
            ));
        }
        let unallocated = Dim {
            lower: Bound::Const(1),
            upper: Some(Bound::Const(0)),
        };
        let var = self.proc.add_var(Var {
            name: n.clone(),
            ty: ti.ty,
            dims: vec![unallocated; dims.len()],
            char_len: None,
            storage: Storage::Allocatable,
        });
        self.vars.insert(n.clone(), var);
        Ok(var)
    }

    /// Fills in the dimensions and character length of a variable.
    pub(super) fn set_shape(
        &mut self,
        var: VarId,
        ti: &TypeInfo,
        dims: Option<&[DimSpec]>,
        param: bool,
    ) -> R<()> {
        let char_len = match &ti.char_len {
            CharLenInfo::None => None,
            CharLenInfo::Const(c) => Some(Bound::Const(*c)),
            CharLenInfo::Assumed => None,
            CharLenInfo::Expr(e) => Some(self.bound(e)?),
            // One character per element of the string's buffer.
            CharLenInfo::Deferred => Some(Bound::Const(1)),
        };
        let mut out = Vec::new();
        if let Some(dims) = dims {
            if dims.len() > 7 {
                let span = self.proc.span;
                return Err(self.err(span, "arrays have at most 7 dimensions"));
            }
            for (i, d) in dims.iter().enumerate() {
                let last = i + 1 == dims.len();
                let (lower, upper) = match d {
                    // Fortran 77's assumed size before `*`: a dummy's last
                    // dimension declared `1` (`a(lda, 1)`, `ipvt(1)`, as
                    // LINPACK and EISPACK write it) spans the actual's
                    // storage, as gfortran and every F77 compiler read it.
                    DimSpec::Explicit { lower, upper }
                        if param && last && is_one_extent(lower.as_ref(), upper) =>
                    {
                        (lower, None)
                    }
                    DimSpec::Explicit { lower, upper } => (lower, Some(upper)),
                    DimSpec::AssumedShape { lower } if param && !last => {
                        // Rank > 1: the extent is a hidden parameter.
                        let name = self.proc.var(var).name.clone();
                        let Some(&ext) = self.vars.get(&super::extent_param(&name, i + 1)) else {
                            let span = self.name_span(&name);
                            return Err(self.err(
                                span,
                                format!("`{name}`: an assumed-shape array mixes `:` with explicit bounds (not supported)"),
                            ));
                        };
                        let lower = match lower {
                            Some(e) => self.bound(e)?,
                            None => Bound::Const(1),
                        };
                        let upper = Bound::Sub(
                            Box::new(Bound::Add(
                                Box::new(lower.clone()),
                                Box::new(Bound::Var(ext)),
                            )),
                            Box::new(Bound::Const(1)),
                        );
                        out.push(Dim {
                            lower,
                            upper: Some(upper),
                        });
                        continue;
                    }
                    DimSpec::AssumedSize { lower } | DimSpec::AssumedShape { lower } => {
                        let name = self.proc.var(var).name.clone();
                        if !last || !param {
                            let span = self.name_span(&name);
                            return Err(self.err(span, format!("`{name}`: an assumed extent is allowed only in the last dimension of a dummy argument")));
                        }
                        (lower, None)
                    }
                };
                let lower = match lower {
                    Some(e) => self.bound(e)?,
                    None => Bound::Const(1),
                };
                let upper = match upper {
                    Some(e) => Some(self.bound(e)?),
                    None => None,
                };
                out.push(Dim { lower, upper });
            }
        }
        let v = &mut self.proc.vars[var.index()];
        v.dims = out;
        v.char_len = char_len;
        Ok(())
    }

    pub(super) fn name_span(&self, name: &str) -> Span {
        self.visible_decl(name)
            .map(|(_, d)| d.span)
            .unwrap_or(self.proc.span)
    }

    /// A specification expression as a [`Bound`].
    pub fn bound(&mut self, e: &Expr) -> R<Bound> {
        use super::super::ast::{BinOp, UnOp};
        Ok(match &e.kind {
            ExprKind::Int { value, .. } => Bound::Const(*value),
            ExprKind::Paren(x) => self.bound(x)?,
            ExprKind::Unary(UnOp::Neg, x) => Bound::Neg(Box::new(self.bound(x)?)),
            ExprKind::Unary(UnOp::Plus, x) => self.bound(x)?,
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (Box::new(self.bound(a)?), Box::new(self.bound(b)?));
                match op {
                    BinOp::Add => Bound::Add(a, b),
                    BinOp::Sub => Bound::Sub(a, b),
                    BinOp::Mul => Bound::Mul(a, b),
                    BinOp::Div => Bound::Div(a, b),
                    _ => return Err(self.err(e.span, "unsupported operator in an array bound")),
                }
            }
            ExprKind::Name(n) => match self.resolve(n)? {
                Resolved::Const(c) => match c.as_int() {
                    Some(v) => Bound::Const(v),
                    None => {
                        return Err(
                            self.err(e.span, format!("bound `{}` is not an integer", n.text))
                        )
                    }
                },
                Resolved::Var(v)
                    if self.proc.var(v).ty.is_int() && !self.proc.var(v).is_array() =>
                {
                    Bound::Var(v)
                }
                Resolved::Unknown => {
                    return Err(self.err(
                        e.span,
                        format!(
                            "array bound `{}` is not a dummy argument, module variable or constant",
                            n.text
                        ),
                    ))
                }
                _ => {
                    return Err(self.err(
                        e.span,
                        format!("bound `{}` is not an integer scalar", n.text),
                    ))
                }
            },
            ExprKind::Apply { name, args }
                if matches!(name.text.as_str(), "max" | "min") && args.len() >= 2 =>
            {
                let mut it = args.iter();
                let mut acc = self.bound_arg(it.next().expect("two args"))?;
                for a in it {
                    let b = Box::new(self.bound_arg(a)?);
                    acc = if name.text == "max" {
                        Bound::Max(Box::new(acc), b)
                    } else {
                        Bound::Min(Box::new(acc), b)
                    };
                }
                acc
            }
            ExprKind::Apply { name, args } if name.text == "size" => self.size_bound(e, args)?,
            _ => return Err(self.err(e.span, "unsupported array bound expression")),
        })
    }

    fn bound_arg(&mut self, a: &super::super::ast::Arg) -> R<Bound> {
        match &a.value {
            ArgValue::Expr(e) => self.bound(e),
            ArgValue::Range { .. } => {
                Err(self.err(self.span, "unsupported array bound expression"))
            }
        }
    }

    /// Folds a constant expression in this procedure's scope.
    pub fn fold(&mut self, e: &Expr) -> R<ConstVal> {
        match self.fold_quiet(e) {
            Ok(c) => Ok(c),
            Err(nc) => Err(self.err(nc.span, nc.message)),
        }
    }

    /// Folds a constant expression in this procedure's scope, reporting
    /// nothing.
    pub fn fold_quiet(&self, e: &Expr) -> Result<ConstVal, super::consts::NotConst> {
        let lookup = |n: &str| {
            self.u()
                .scope
                .constant(n)
                .or_else(|| self.host_scope().and_then(|h| h.constant(n)))
                .or_else(|| self.module_scope().and_then(|m| m.constant(n)))
        };
        fold(e, &lookup)
    }

    // ----- declaration of parameters ---------------------------------------

    /// Creates the parameter variables: dummy arguments, host variables,
    /// function result (last).
    pub fn declare_params(&mut self) {
        let prog = self.prog;
        let u = &prog.units[self.unit];
        // (name, scope, declaration, type when not from the declaration)
        type Param<'s> = (Name, &'s Scope, Option<&'s VarDecl>, Option<TypeInfo>);
        let mut params: Vec<Param<'p>> = Vec::new();
        for a in &u.ast.args {
            if let Some(st) = u.scope.struct_decl(&a.text) {
                for leaf in &st.leaves {
                    let name = Name {
                        text: leaf.clone(),
                        span: a.span,
                    };
                    params.push((name, &u.scope, u.scope.var(leaf), None));
                }
                continue;
            }
            // Dummy procedures are bound per instance, not passed.
            if !u.dummy_procs.iter().any(|d| d.text == a.text) {
                params.push((a.clone(), &u.scope, u.scope.var(&a.text), None));
            }
        }
        let declared = params.len();
        // The allocation status of each ALLOCATABLE scalar dummy.
        for a in &u.ast.args {
            let status = super::scope::status_name(&a.text);
            if let Some(d) = u.scope.var(&status) {
                let name = Name {
                    text: status,
                    span: a.span,
                };
                params.push((name, &u.scope, Some(d), None));
            }
        }
        for a in &u.ast.args {
            if u.scope.is_optional_dummy(&a.text) {
                let name = Name {
                    text: super::present_flag(&a.text),
                    span: a.span,
                };
                params.push((name, &u.scope, None, Some(TypeInfo::plain(Type::Bool))));
            }
        }
        let owners = super::hidden_param_owners(u);
        for a in &owners {
            for k in 1..super::assumed_shape_rank(prog, u, &a.text) {
                let name = Name {
                    text: super::extent_param(&a.text, k),
                    span: a.span,
                };
                params.push((name, &u.scope, None, Some(TypeInfo::plain(Type::I64))));
            }
        }
        for a in &owners {
            for k in 1..=super::allocatable_dummy_rank(prog, u, &a.text) {
                let name = Name {
                    text: super::lbound_param(&a.text, k),
                    span: a.span,
                };
                params.push((name, &u.scope, None, Some(TypeInfo::plain(Type::I64))));
            }
        }
        // Allocation statuses, presence flags, extents and lower bounds
        // are parameters the source does not declare.
        if params.len() > declared {
            self.proc.hidden_params = true;
        }
        if let Some(h) = u.host {
            for name in &u.host_vars {
                let hs = &prog.units[prog.declaring_unit(h, name)].scope;
                let span = hs.var(name).map(|d| d.span).unwrap_or(u.ast.span);
                params.push((
                    Name {
                        text: name.clone(),
                        span,
                    },
                    hs,
                    hs.var(name),
                    None,
                ));
            }
        }
        let result = match &u.ast.kind {
            ProcKind::Function { result, .. } => {
                let rn = result.clone().unwrap_or_else(|| u.ast.name.clone());
                match u.scope.struct_decl(&rn.text) {
                    // A structure result: its components are trailing
                    // parameters the caller gives ([`super::Sig::struct_result`]).
                    Some(st) => {
                        for leaf in &st.leaves {
                            let name = Name {
                                text: leaf.clone(),
                                span: rn.span,
                            };
                            params.push((name, &u.scope, u.scope.var(leaf), None));
                        }
                        None
                    }
                    None => {
                        params.push((rn.clone(), &u.scope, u.scope.var(&rn.text), None));
                        Some(rn)
                    }
                }
            }
            _ => None,
        };
        let mut created = Vec::new();
        for (i, (name, scope, decl, given)) in params.iter().enumerate() {
            let ti = given
                .clone()
                .or_else(|| decl.and_then(|d| d.ty.clone()))
                .or_else(|| scope.implicit_type(&name.text));
            let Some(ti) = ti else {
                self.err(
                    name.span,
                    format!("`{}` has no type (IMPLICIT NONE is in effect)", name.text),
                );
                continue;
            };
            let v = self.proc.add_var(Var {
                name: name.text.clone(),
                ty: ti.ty,
                dims: Vec::new(),
                char_len: None,
                storage: Storage::Param(i as u32),
            });
            self.proc.params.push(v);
            self.vars.insert(name.text.clone(), v);
            created.push((v, ti, *decl, name.clone()));
        }
        let shaped: Vec<(VarId, Name)> = created.iter().map(|c| (c.0, c.3.clone())).collect();
        for (v, ti, decl, name) in created {
            let is_result = result.as_ref().is_some_and(|r| r.text == name.text);
            if ti.char_len == CharLenInfo::Deferred && is_result {
                let fixed = decl.filter(|d| d.fixed_len.is_some());
                if let (Some(d), Some(true)) = (fixed, decl.map(|d| d.dims.is_some())) {
                    // (An array of constant length: the error of
                    // ALLOCATABLE CHARACTER array results.)
                    let _ = self.allocatable_result(v, &ti, d, &name);
                } else if decl
                    .and_then(|d| d.dims.as_ref())
                    .is_some_and(|d| d.len() > 1)
                {
                    self.err(
                        name.span,
                        format!(
                            "unsupported Fortran: the deferred-length CHARACTER array result `{}`",
                            name.text
                        ),
                    );
                } else {
                    // The caller's unallocated buffer, passed by
                    // descriptor: the function allocates it as it assigns
                    // its result ([`super::deferred_chars`]).
                    self.deferred_result(v);
                }
                continue;
            }
            if let Some(span) = decl.and_then(|d| d.allocatable) {
                if is_result {
                    let _ = self.allocatable_result(v, &ti, decl.expect("declared"), &name);
                    continue;
                }
                if !owners.iter().any(|a| a.text == name.text) {
                    self.err(
                        span,
                        format!("unsupported Fortran: ALLOCATABLE host variable `{}` in an internal procedure", name.text),
                    );
                    continue;
                }
                let _ = self.allocatable_dummy(v, &ti, decl.expect("declared"), &name);
                continue;
            }
            // A character result of non-constant length takes its length
            // from the buffer the caller gives (see `char_runtime`).
            let runtime_len = is_result
                && ti.ty == Type::Char
                && matches!(ti.char_len, CharLenInfo::Expr(_))
                && decl.is_none_or(|d| d.dims.is_none());
            let mut ti = ti;
            if runtime_len {
                ti.char_len = CharLenInfo::Assumed;
            }
            let _ = self.set_shape(v, &ti, decl.and_then(|d| d.dims.as_deref()), true);
            if is_result {
                let var = self.proc.var(v);
                if var.is_array() {
                    // An array result stays the last parameter, given by
                    // the caller ([`super::Sig::array_result`]).
                    if var.dims.iter().any(|d| d.upper.is_none()) {
                        self.err(
                            name.span,
                            "unsupported Fortran: an array function result of assumed or deferred shape",
                        );
                    }
                    self.proc.array_result = Some(v);
                    continue;
                }
                let char_len = var.char_len.as_ref().and_then(|b| b.as_const());
                if ti.ty == Type::Char && char_len.is_none() && !runtime_len {
                    self.err(
                        name.span,
                        "unsupported Fortran: a character function result whose length is not a constant",
                    );
                }
                self.proc.result = Some(v);
            }
        }
        // A bound may read a dummy given its dimensions further down the
        // argument list (`r(k)` with `k(4)`): checked once all have them.
        for (v, name) in shaped {
            let var = self.proc.var(v);
            let mut arrays = Vec::new();
            let bounds = var
                .dims
                .iter()
                .flat_map(|d| std::iter::once(&d.lower).chain(&d.upper));
            for b in bounds.chain(&var.char_len) {
                b.for_each_var(&mut |r| {
                    let read = self.proc.var(r);
                    if !read.ty.is_int() || read.is_array() {
                        arrays.push(read.name.clone());
                    }
                });
            }
            if let Some(read) = arrays.first() {
                self.err(
                    name.span,
                    format!("bound `{read}` of `{}` is not an integer scalar", name.text),
                );
            }
        }
    }

    /// Sets the components with default initialization of local
    /// derived-type variables (and INTENT(OUT) dummies) at entry.
    fn default_initialization(&mut self) {
        let scope = &self.prog.units[self.unit].scope;
        let mut names: Vec<(&String, &Expr)> = scope
            .syms
            .iter()
            .filter_map(|(n, s)| match s {
                // (An ALLOCATABLE array of structures takes its
                // components' defaults when allocated.)
                Sym::Var(v)
                    if v.global.is_none()
                        && !v.save
                        && !scope.save_all
                        && v.allocatable.is_none() =>
                {
                    let wanted =
                        v.arg.is_none() || v.intent == Some(super::super::ast::Intent::Out);
                    v.default_init.as_ref().filter(|_| wanted).map(|e| (n, e))
                }
                _ => None,
            })
            .collect();
        names.sort_by_key(|(n, _)| n.as_str());
        for (n, init) in names {
            self.span = init.span;
            self.start_statement();
            let target = Expr {
                kind: ExprKind::Name(Name {
                    text: n.clone(),
                    span: init.span,
                }),
                span: init.span,
            };
            let _ = self.assign(&target, init);
        }
    }

    /// Gives each VALUE dummy argument a local copy made at entry, which
    /// the body reads and writes in its place: the caller's actual is
    /// never changed. Only scalars of intrinsic non-character type.
    fn value_copies(&mut self) {
        let scope = &self.prog.units[self.unit].scope;
        let mut values: Vec<(&String, &VarDecl)> = scope
            .syms
            .iter()
            .filter_map(|(n, s)| match s {
                Sym::Var(v) if v.value.is_some() => Some((n, v)),
                _ => None,
            })
            .collect();
        values.sort_by_key(|(n, _)| n.as_str());
        for (name, decl) in values {
            let span = decl.value.expect("VALUE");
            let why = if decl.arg.is_none() {
                Some("is not a dummy argument")
            } else if decl.dims.is_some() {
                Some("is an array (only scalar VALUE dummies are supported)")
            } else if decl.optional {
                Some("is OPTIONAL (not supported with VALUE)")
            } else if decl.ty.as_ref().is_some_and(|t| t.ty == Type::Char) {
                Some("is CHARACTER (not supported with VALUE)")
            } else {
                None
            };
            if let Some(why) = why {
                self.err(span, format!("VALUE `{name}` {why}"));
                continue;
            }
            let Some(&param) = self.vars.get(name.as_str()) else {
                continue;
            };
            let ty = self.proc.var(param).ty;
            let copy = self.temp(name, ty);
            let v = self.val(Inst::Load(param), ty);
            self.emit(Inst::Store(copy, v), None);
            self.vars.insert(name.clone(), copy);
        }
    }

    /// Lowers the executable part of the procedure.
    pub fn lower_body(&mut self) {
        let prog = self.prog;
        let u = &prog.units[self.unit];
        self.collect_labels(&u.ast.body);
        self.value_copies();
        self.release_intent_out();
        self.runtime_sized_declarations();
        self.default_initialization();
        self.data_statements();
        self.restore_persistent_allocs();
        for (name, args, value, span) in &u.scope.leading_assignments {
            self.span = *span;
            let target = Expr {
                kind: ExprKind::Apply {
                    name: name.clone(),
                    args: args
                        .iter()
                        .map(|a| super::super::ast::Arg {
                            keyword: None,
                            value: ArgValue::Expr(Expr {
                                kind: ExprKind::Name(a.clone()),
                                span: a.span,
                            }),
                        })
                        .collect(),
                },
                span: name.span,
            };
            let _ = self.assign(&target, value);
        }
        self.stmts(&u.ast.body);
        self.span = u.ast.span;
        self.keep_persistent_allocs();
        self.terminate(Terminator::Return);
    }

    fn collect_labels(&mut self, body: &[Stmt]) {
        for s in body {
            if let Some(l) = s.label {
                if self.labels.contains_key(&l) {
                    self.err(s.span, format!("label {l} is defined more than once"));
                } else {
                    let b = self.block();
                    self.labels.insert(l, b);
                }
            }
            for_each_body(s, &mut |b| self.collect_labels(b));
        }
    }

    /// Applies DATA statements to the initial values of SAVE globals.
    fn data_statements(&mut self) {
        let prog = self.prog;
        for (group, span) in &prog.units[self.unit].scope.data {
            self.span = *span;
            let _ = self.data_group(group);
        }
    }

    fn data_group(&mut self, g: &super::super::ast::DataGroup) -> R<()> {
        // Expand the objects into (global, element offset, count).
        let mut targets = Vec::new();
        let mut env = HashMap::new();
        for o in &g.objects {
            self.data_object(o, &mut env, &mut targets)?;
        }
        let total = targets
            .iter()
            .map(|t: &(usize, Type, i64, i64, Span)| t.3.max(0) as usize)
            .fold(0usize, usize::saturating_add);
        // Count the values before expanding them: a repeat count is bounded
        // by the objects, not by memory.
        let mut repeats = Vec::with_capacity(g.values.len());
        let mut count = 0usize;
        for (repeat, _) in &g.values {
            let n = match repeat {
                Some(r) => self.fold(r)?.as_int().unwrap_or(1).max(0) as usize,
                None => 1,
            };
            count = count.saturating_add(n);
            repeats.push(n);
        }
        if total != count {
            return Err(self.err(
                self.span,
                format!("DATA statement has {total} objects but {count} values"),
            ));
        }
        if total > MAX_INITIAL_VALUES {
            return Err(self.err(self.span, too_many_initial_values("DATA", total)));
        }
        let mut values = Vec::with_capacity(total);
        for ((_, v), n) in g.values.iter().zip(repeats) {
            let c = self.fold(v)?;
            values.extend(std::iter::repeat_n((c, v.span), n));
        }
        let mut vals = values.into_iter();
        for (g, ty, offset, count, span) in targets {
            for k in 0..count {
                let (c, _) = vals.next().expect("counted");
                let Some(c) = c.convert(ty).and_then(|c| c.to_ir()) else {
                    return Err(self.err(span, "DATA value of the wrong type"));
                };
                let init = &mut self.out.globals[g].init;
                let pos = (offset + k) as usize;
                if init.len() <= pos {
                    let zero = zero_const(ty);
                    init.resize(pos + 1, zero);
                }
                init[pos] = c;
            }
        }
        Ok(())
    }

    fn data_object(
        &mut self,
        o: &Expr,
        env: &mut HashMap<String, i64>,
        targets: &mut Vec<(usize, Type, i64, i64, Span)>,
    ) -> R<()> {
        match &o.kind {
            ExprKind::Name(n) => {
                let v = self.var_of(n)?;
                let (g, ty, at) = self.global_of(v, o.span)?;
                let len = match self.const_view(v) {
                    Some(dims) => dims.iter().map(|(lo, hi)| (hi - lo + 1).max(0)).product(),
                    None => self.out.globals[g].len().max(1) - at,
                };
                targets.push((g, ty, at, len, o.span));
                Ok(())
            }
            ExprKind::Apply { name, args } => {
                let v = self.var_of(name)?;
                let (g, ty, at) = self.global_of(v, o.span)?;
                // The variable's own view (a COMMON member may view its
                // global with another shape), else the global's.
                let dims = match self.const_view(v) {
                    Some(d) if !d.is_empty() => d,
                    _ => self.out.globals[g].dims.clone(),
                };
                if dims.len() != args.len() {
                    return Err(self.err(
                        o.span,
                        format!("wrong number of subscripts for `{}`", name.text),
                    ));
                }
                let mut offset = 0;
                let mut stride = 1;
                for (a, (lo, hi)) in args.iter().zip(dims) {
                    let ArgValue::Expr(e) = &a.value else {
                        return Err(self.err(o.span, "unsupported Fortran: array section in DATA"));
                    };
                    let i = self.fold_with(e, env)?;
                    if i < lo || i > hi {
                        return Err(
                            self.err(e.span, format!("DATA subscript {i} outside {lo}:{hi}"))
                        );
                    }
                    offset += (i - lo) * stride;
                    stride *= hi - lo + 1;
                }
                targets.push((g, ty, at + offset, 1, o.span));
                Ok(())
            }
            ExprKind::ImpliedDo {
                items,
                var,
                start,
                end,
                step,
            } => {
                let (s, e) = (self.fold_with(start, env)?, self.fold_with(end, env)?);
                let st = match step {
                    Some(x) => self.fold_with(x, env)?,
                    None => 1,
                };
                if st == 0 {
                    return Err(self.err(o.span, "zero step in an implied DO"));
                }
                let mut i = s;
                while (st > 0 && i <= e) || (st < 0 && i >= e) {
                    env.insert(var.text.clone(), i);
                    for it in items {
                        self.data_object(it, env, targets)?;
                    }
                    i += st;
                }
                env.remove(&var.text);
                Ok(())
            }
            _ => Err(self.err(o.span, "unsupported DATA object")),
        }
    }

    fn fold_with(&mut self, e: &Expr, env: &HashMap<String, i64>) -> R<i64> {
        let lookup = |n: &str| {
            env.get(n)
                .map(|&v| ConstVal::Int(v, Type::I32))
                .or_else(|| self.u().scope.constant(n))
                .or_else(|| self.host_scope().and_then(|h| h.constant(n)))
                .or_else(|| self.module_scope().and_then(|m| m.constant(n)))
        };
        match fold(e, &lookup) {
            Ok(c) => match c.as_int() {
                Some(v) => Ok(v),
                None => Err(self.err(e.span, "expected an integer constant")),
            },
            Err(nc) => Err(self.err(nc.span, nc.message)),
        }
    }

    /// The constant `(lower, upper)` bounds of an array variable (empty for
    /// a scalar), `None` when some bound is not constant.
    fn const_view(&self, v: VarId) -> Option<Vec<(i64, i64)>> {
        self.proc
            .var(v)
            .dims
            .iter()
            .map(|d| match (&d.lower, &d.upper) {
                (Bound::Const(lo), Some(Bound::Const(hi))) => Some((*lo, *hi)),
                _ => None,
            })
            .collect()
    }

    /// The global a DATA object lives in, its element type and the element
    /// where the object's storage starts.
    fn global_of(&mut self, v: VarId, span: Span) -> R<(usize, Type, i64)> {
        match self.proc.var(v).storage {
            Storage::Global(g, at) => Ok((g.index(), self.proc.var(v).ty, at)),
            _ => Err(self.err(
                span,
                format!("`{}` cannot be initialised by DATA", self.proc.var(v).name),
            )),
        }
    }
}

/// Instruction equality that tells `-0.0` from `0.0`.
fn same_inst(a: &Inst, b: &Inst) -> bool {
    match (a, b) {
        (Inst::Const(Const::Float(x)), Inst::Const(Const::Float(y))) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// The zero (blank, false) constant of a type.
pub(crate) fn zero_const(ty: Type) -> Const {
    match ty {
        Type::F32 | Type::F64 => Const::Float(0.0),
        Type::Bool => Const::Bool(false),
        Type::Char => Const::Char(b' '),
        _ => Const::Int(0),
    }
}

/// Calls `f` on each statement list nested directly in a statement.
pub(crate) fn for_each_body(s: &Stmt, f: &mut dyn FnMut(&[Stmt])) {
    match &s.kind {
        StmtKind::If {
            arms, else_body, ..
        } => {
            arms.iter().for_each(|(_, b)| f(b));
            if let Some(b) = else_body {
                f(b);
            }
        }
        StmtKind::LogicalIf { stmt, .. } => f(std::slice::from_ref(stmt)),
        StmtKind::Do { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::DoForever { body, .. } => f(body),
        StmtKind::SelectCase { cases, .. } => cases.iter().for_each(|(_, b)| f(b)),
        StmtKind::Associate { body, .. } | StmtKind::Block { body, .. } => f(body),
        StmtKind::Where {
            arms, else_body, ..
        } => {
            arms.iter().for_each(|(_, b)| f(b));
            if let Some(b) = else_body {
                f(b);
            }
        }
        StmtKind::Forall { body, .. } => f(body),
        _ => {}
    }
}

/// The global holding a SAVE or module variable of a scope: constant
/// dimensions and its initial value. Named constants come from the scope,
/// then from `outer` in order (the hosts and the module of a procedure:
/// `real(wp), parameter :: c(2) = [1.0_wp, 2.0_wp]` in a module procedure
/// with `wp` the module's).
pub(crate) fn global_for(
    scope: &Scope,
    outer: &[&Scope],
    name: &str,
    gname: String,
    diags: &mut Vec<Diagnostic>,
) -> Option<Global> {
    let d = scope.var(name)?;
    if let Some(span) = d.allocatable {
        diags.push(Diagnostic::error(
            span,
            format!("unsupported Fortran: ALLOCATABLE `{name}` in COMMON"),
        ));
        return None;
    }
    let Some(ti) = d.ty.clone().or_else(|| scope.implicit_type(name)) else {
        diags.push(Diagnostic::error(
            d.span,
            format!("variable `{name}` has no type (IMPLICIT NONE is in effect)"),
        ));
        return None;
    };
    let lookup = |n: &str| {
        scope
            .constant(n)
            .or_else(|| outer.iter().find_map(|o| o.constant(n)))
    };
    let mut dims = Vec::new();
    for dim in d.dims.iter().flatten() {
        let DimSpec::Explicit { lower, upper } = dim else {
            diags.push(Diagnostic::error(
                d.span,
                format!("`{name}` needs constant bounds"),
            ));
            return None;
        };
        let lo = match lower {
            Some(l) => fold(l, &lookup).ok().and_then(|c| c.as_int()),
            None => Some(1),
        };
        let hi = fold(upper, &lookup).ok().and_then(|c| c.as_int());
        match (lo, hi) {
            (Some(lo), Some(hi)) => dims.push((lo, hi)),
            _ => {
                diags.push(Diagnostic::error(
                    upper.span,
                    format!("`{name}` needs constant bounds (it is saved or a module variable)"),
                ));
                return None;
            }
        }
    }
    let char_len = match ti.char_len {
        CharLenInfo::Const(c) => c,
        CharLenInfo::None => 1,
        _ => {
            diags.push(Diagnostic::error(
                d.span,
                format!("`{name}` needs a constant length"),
            ));
            return None;
        }
    };
    let mut global = Global {
        name: gname,
        ty: ti.ty,
        dims,
        char_len,
        init: Vec::new(),
    };
    if let Some(init) = d.init.as_ref().or(d.default_init.as_ref()) {
        let n = global.len().max(1) as usize;
        if n > MAX_INITIAL_VALUES {
            diags.push(Diagnostic::error(
                init.span,
                too_many_initial_values(&format!("`{name}`"), n),
            ));
            return Some(global);
        }
        match fold_elements(init, &lookup, n) {
            Ok(elems) => {
                let is_ctor = super::consts::constructs_array(init);
                if is_ctor && elems.len() != n {
                    diags.push(Diagnostic::error(
                        init.span,
                        format!(
                            "initial value of `{name}` has {} elements, `{name}` has {n}",
                            elems.len()
                        ),
                    ));
                    return Some(global);
                }
                let mut values = Vec::new();
                for c in &elems {
                    match init_bytes(c, ti.ty, char_len) {
                        Some(mut b) => values.append(&mut b),
                        None => {
                            diags.push(Diagnostic::error(
                                init.span,
                                format!("initial value of `{name}` has the wrong type"),
                            ));
                            return Some(global);
                        }
                    }
                }
                global.init = if is_ctor {
                    values
                } else {
                    (0..n).flat_map(|_| values.clone()).collect()
                };
            }
            Err(nc) => diags.push(Diagnostic::error(nc.span, nc.message)),
        }
    }
    Some(global)
}

/// The error for an initialization of more than [`MAX_INITIAL_VALUES`]
/// elements.
fn too_many_initial_values(what: &str, n: usize) -> String {
    format!(
        "{what} initializes {n} elements; at most {MAX_INITIAL_VALUES} initial values are supported"
    )
}

/// The storage of one initial value of type `ty` (`char_len` bytes,
/// blank-padded, for a string), or `None` if of the wrong type.
fn init_bytes(c: &ConstVal, ty: Type, char_len: i64) -> Option<Vec<Const>> {
    match c {
        ConstVal::Str(s) if ty == Type::Char => {
            let mut bytes: Vec<Const> = literal_bytes(s).into_iter().map(Const::Char).collect();
            bytes.resize(char_len as usize, Const::Char(b' '));
            Some(bytes)
        }
        _ if ty == Type::Char => None,
        c => Some(vec![c.clone().convert(ty)?.to_ir()?]),
    }
}

/// Every name an internal procedure references (in expressions, targets,
/// calls, DO variables and declarations' bounds).
pub(crate) fn referenced_names(p: &Procedure) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in &p.body {
        stmt_names(s, &mut out);
    }
    for d in &p.decls {
        use super::super::ast::DeclKind;
        match &d.kind {
            DeclKind::Type {
                entities, attrs, ..
            } => {
                for a in attrs {
                    if let super::super::ast::Attr::Dimension(ds) = a {
                        ds.iter().for_each(|x| dim_names(x, &mut out));
                    }
                }
                for e in entities {
                    e.dims.iter().flatten().for_each(|x| dim_names(x, &mut out));
                }
            }
            DeclKind::Dimension(entities) => {
                for e in entities {
                    e.dims.iter().flatten().for_each(|x| dim_names(x, &mut out));
                }
            }
            DeclKind::StmtFunction { body, .. } => expr_names(body, &mut out),
            _ => {}
        }
    }
    out
}

/// True for a dimension declared `1` or `1:1` with literal bounds: the
/// last dimension of a Fortran 77 dummy written that way is of assumed
/// size.
fn is_one_extent(lower: Option<&Expr>, upper: &Expr) -> bool {
    let one = |e: &Expr| matches!(e.kind, ExprKind::Int { value: 1, .. });
    one(upper) && lower.is_none_or(one)
}

fn dim_names(d: &DimSpec, out: &mut BTreeSet<String>) {
    match d {
        DimSpec::Explicit { lower, upper } => {
            lower.iter().for_each(|e| expr_names(e, out));
            expr_names(upper, out);
        }
        DimSpec::AssumedSize { lower } | DimSpec::AssumedShape { lower } => {
            lower.iter().for_each(|e| expr_names(e, out))
        }
    }
}

fn stmt_names(s: &Stmt, out: &mut BTreeSet<String>) {
    let mut names = Vec::new();
    stmt_exprs(s, &mut |x| expr_names(x, out), &mut |n| {
        names.push(n.to_string())
    });
    out.extend(names);
    for_each_body(s, &mut |b| b.iter().for_each(|s| stmt_names(s, out)));
}

/// Calls `e` on every expression of the statement `s` (not of the
/// statements it contains) and `n` on the other names it references (DO
/// and FORALL variables, the subroutine of a CALL, ADF / ADR variables).
fn stmt_exprs(s: &Stmt, e: &mut dyn FnMut(&Expr), n: &mut dyn FnMut(&str)) {
    match &s.kind {
        StmtKind::Assign { target, value } => {
            e(target);
            e(value);
        }
        StmtKind::If { arms, .. } => arms.iter().for_each(|(c, _)| e(c)),
        StmtKind::LogicalIf { cond, .. } => e(cond),
        StmtKind::Do {
            var,
            start,
            end,
            step,
            ..
        } => {
            n(&var.text);
            e(start);
            e(end);
            step.iter().for_each(&mut *e);
        }
        StmtKind::DoWhile { cond, .. } => e(cond),
        StmtKind::Allocate {
            objects,
            stat,
            errmsg,
            source,
            mold,
            char_len,
        } => objects
            .iter()
            .chain([stat, errmsg, source, mold, char_len].into_iter().flatten())
            .for_each(&mut *e),
        StmtKind::Deallocate {
            objects,
            stat,
            errmsg,
        } => objects
            .iter()
            .chain([stat, errmsg].into_iter().flatten())
            .for_each(&mut *e),
        StmtKind::ComputedGoto { index, .. } => e(index),
        StmtKind::ArithmeticIf { value, .. } => e(value),
        StmtKind::Write {
            format,
            items,
            control,
        }
        | StmtKind::Read {
            format,
            items,
            control,
        } => {
            if let super::super::ast::IoFormat::Expr(f) = format {
                e(f);
            }
            items
                .iter()
                .chain([&control.unit, &control.iostat].into_iter().flatten())
                .for_each(&mut *e);
        }
        StmtKind::Stop(code) => code.iter().for_each(&mut *e),
        StmtKind::Associate { pairs, .. } => pairs.iter().for_each(|(_, x)| e(x)),
        StmtKind::Where { arms, .. } => arms.iter().for_each(|(c, _)| e(c)),
        StmtKind::Forall { indices, mask, .. } => {
            for ix in indices {
                n(&ix.var.text);
                for x in [&ix.lo, &ix.hi].into_iter().chain(&ix.stride) {
                    e(x);
                }
            }
            mask.iter().for_each(&mut *e);
        }
        StmtKind::Call { name, args } => {
            n(&name.text);
            for a in args {
                match &a.value {
                    ArgValue::Expr(x) => e(x),
                    ArgValue::Range { lo, hi, stride } => lo
                        .iter()
                        .chain(hi.iter())
                        .chain(stride.iter())
                        .for_each(&mut *e),
                }
            }
        }
        StmtKind::Adf(b) => {
            b.outlined.iter().for_each(|o| n(&o.text));
            for list in [&b.seeds, &b.results] {
                AdfEntry::visit(list, &mut |v| n(&v.text), e);
            }
        }
        StmtKind::SelectCase {
            selector, cases, ..
        } => {
            e(selector);
            for (sel, _) in cases {
                if let super::super::ast::CaseSelector::Items(items) = sel {
                    for it in items {
                        match it {
                            super::super::ast::CaseItem::Value(v) => e(v),
                            super::super::ast::CaseItem::Range(a, b) => {
                                a.iter().chain(b.iter()).for_each(&mut *e)
                            }
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// The calls in the body of `p` (CALL statements and references
/// `f(...)`): the name called and, per actual argument, the name it is
/// when it is a bare name.
pub(crate) fn call_sites(p: &Procedure) -> Vec<(String, Vec<Option<String>>)> {
    fn bare(a: &super::super::ast::Arg) -> Option<String> {
        match &a.value {
            ArgValue::Expr(Expr {
                kind: ExprKind::Name(n),
                ..
            }) => Some(n.text.clone()),
            _ => None,
        }
    }
    fn in_expr(x: &Expr, out: &mut Vec<(String, Vec<Option<String>>)>) {
        if let ExprKind::Apply { name, args } = &x.kind {
            out.push((name.text.clone(), args.iter().map(bare).collect()));
        }
        x.kind.children().into_iter().for_each(|c| in_expr(c, out));
    }
    fn in_stmt(s: &Stmt, out: &mut Vec<(String, Vec<Option<String>>)>) {
        if let StmtKind::Call { name, args } = &s.kind {
            out.push((name.text.clone(), args.iter().map(bare).collect()));
        }
        stmt_exprs(s, &mut |x| in_expr(x, out), &mut |_| {});
        for_each_body(s, &mut |b| b.iter().for_each(|s| in_stmt(s, out)));
    }
    let mut out = Vec::new();
    p.body.iter().for_each(|s| in_stmt(s, &mut out));
    out
}

/// Every name referenced in an expression.
pub(crate) fn expr_names(e: &Expr, out: &mut BTreeSet<String>) {
    if let ExprKind::Name(n) | ExprKind::Apply { name: n, .. } = &e.kind {
        out.insert(n.text.clone());
    }
    e.kind
        .children()
        .into_iter()
        .for_each(|x| expr_names(x, out));
}

/// The variables of a host that its internal procedures may use: declared
/// variables, dummy arguments and names used as variables in its body.
pub(crate) fn host_variable_names(host: &Unit) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = host
        .scope
        .syms
        .iter()
        .filter(|(_, s)| matches!(s, Sym::Var(v) if v.global.is_none()))
        .map(|(n, _)| n.clone())
        .collect();
    let mut bare = BTreeSet::new();
    // The statements of ADF blocks, outlined into internal subroutines by
    // the parser, are the host's own.
    let outlined = host
        .ast
        .contains
        .iter()
        .filter(|c| c.name.text.starts_with('_'));
    for s in host.ast.body.iter().chain(outlined.flat_map(|c| &c.body)) {
        bare_names_stmt(s, &mut bare);
    }
    let mut children: BTreeSet<&str> = host
        .ast
        .contains
        .iter()
        .map(|c| c.name.text.as_str())
        .collect();
    // Implicitly typed variables of nested subprograms belong to the
    // top-level subprogram (FARFEL's scope rule).
    if host.host.is_none() {
        nested_bare_names(host.ast, &mut bare, &mut children);
    }
    for n in bare {
        if !host.scope.syms.contains_key(&n)
            && !children.contains(n.as_str())
            && host.scope.implicit_type(&n).is_some()
        {
            out.insert(n);
        }
    }
    out
}

/// The bare names used in the nested subprograms of `p` (at any depth)
/// that they do not declare, and the names of those subprograms.
fn nested_bare_names<'a>(
    p: &'a Procedure,
    out: &mut BTreeSet<String>,
    procs: &mut BTreeSet<&'a str>,
) {
    for c in p.contains.iter().filter(|c| c.nested) {
        procs.insert(&c.name.text);
        let mut mine = BTreeSet::new();
        for s in &c.body {
            bare_names_stmt(s, &mut mine);
        }
        let declared: BTreeSet<&str> = c
            .args
            .iter()
            .map(|a| a.text.as_str())
            .chain(std::iter::once(c.name.text.as_str()))
            .chain(c.decls.iter().flat_map(declared_names))
            .collect();
        out.extend(mine.into_iter().filter(|n| !declared.contains(n.as_str())));
        nested_bare_names(c, out, procs);
    }
}

/// The names a declaration declares as variables.
fn declared_names(d: &super::super::ast::Decl) -> Vec<&str> {
    use super::super::ast::DeclKind;
    match &d.kind {
        DeclKind::Type { entities, .. } | DeclKind::Dimension(entities) => {
            entities.iter().map(|e| e.name.text.as_str()).collect()
        }
        _ => Vec::new(),
    }
}

fn bare_names_stmt(s: &Stmt, out: &mut BTreeSet<String>) {
    fn bare(e: &Expr, out: &mut BTreeSet<String>) {
        match &e.kind {
            ExprKind::Name(n) => {
                out.insert(n.text.clone());
            }
            ExprKind::Apply { args, .. } => {
                for a in args {
                    if let ArgValue::Expr(x) = &a.value {
                        bare(x, out);
                    }
                }
            }
            ExprKind::Unary(_, a) | ExprKind::Paren(a) => bare(a, out),
            ExprKind::Binary(_, a, b) => {
                bare(a, out);
                bare(b, out);
            }
            _ => {}
        }
    }
    match &s.kind {
        StmtKind::Assign { target, value } => {
            bare(target, out);
            bare(value, out);
        }
        StmtKind::Do { var, .. } => {
            out.insert(var.text.clone());
        }
        StmtKind::Call { args, .. } => {
            for a in args {
                if let ArgValue::Expr(x) = &a.value {
                    bare(x, out);
                }
            }
        }
        StmtKind::If { arms, .. } => arms.iter().for_each(|(c, _)| bare(c, out)),
        StmtKind::LogicalIf { cond, .. } | StmtKind::DoWhile { cond, .. } => bare(cond, out),
        StmtKind::Where { arms, .. } => arms.iter().for_each(|(c, _)| bare(c, out)),
        StmtKind::Forall { indices, mask, .. } => {
            for ix in indices {
                out.insert(ix.var.text.clone());
                for x in [&ix.lo, &ix.hi].into_iter().chain(&ix.stride) {
                    bare(x, out);
                }
            }
            mask.iter().for_each(|x| bare(x, out));
        }
        StmtKind::Adf(b) => {
            let mut names = Vec::new();
            let mut exprs = Vec::new();
            for list in [&b.seeds, &b.results] {
                AdfEntry::visit(list, &mut |v| names.push(v.text.clone()), &mut |x| {
                    exprs.push(x.clone())
                });
            }
            out.extend(names);
            for x in &exprs {
                if let ExprKind::Apply { name, .. } = &x.kind {
                    out.insert(name.text.clone());
                }
                bare(x, out);
            }
        }
        _ => {}
    }
    for_each_body(s, &mut |b| b.iter().for_each(|s| bare_names_stmt(s, out)));
}

/// Names read by the bounds of a declared array.
pub(crate) fn bound_names(scope: &Scope, name: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    if let Some(d) = scope.var(name) {
        d.dims.iter().flatten().for_each(|x| dim_names(x, &mut out));
        if let Some(TypeInfo {
            char_len: CharLenInfo::Expr(e),
            ..
        }) = &d.ty
        {
            expr_names(e, &mut out);
        }
    }
    out.into_iter().collect()
}

/// What an associate name stands for in the body of its construct (see
/// [`super::associate`]).
#[derive(Clone, Debug)]
pub(crate) enum Associated {
    /// An expression replacing the name as it is: the selector variable or
    /// structure, an element with subscripts fixed at entry, or a
    /// temporary holding the selector's value.
    Expr(Expr),
    /// A section of an array variable with its subscripts, bounds and
    /// strides fixed at entry (temporaries).
    Section(Section),
}

/// An array section selector, its subscripts held in temporaries: the
/// associate name's dimensions are the section's triplets, in order.
#[derive(Clone, Debug)]
pub(crate) struct Section {
    /// The array (a variable, or a component `s%y`).
    pub(super) array: Name,
    /// The subscripts: part markers and fixed subscripts as they are, each
    /// triplet as `lo:last[:stride]` where `last` is the last element the
    /// triplet selects.
    pub(super) args: Vec<Arg>,
    /// For each triplet, in order: the temporary holding `lo - stride`
    /// (element `i` of the name is element `offset + i*stride` of the
    /// array) and the stride's temporary (`None`: stride 1).
    pub(super) triplets: Vec<(Expr, Option<Expr>)>,
}

/// The associate names in force, by name.
pub(crate) type Substitution = HashMap<String, Associated>;
