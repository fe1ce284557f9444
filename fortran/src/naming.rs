//! Names of temporaries after what they hold.
//!
//! A temporary's name is read off its defining expression: a short
//! spelling of the whole expression when there is one (`sqrt_i` for
//! `sqrt(real(i, 8))`, `i_p1` for `i + 1`, `x_i` for an element `x(i)`,
//! `lbound_m` for `lbound(m, 1)`,
//! `h_x_h` for `h * h`), else its role: the value of an intrinsic
//! (`exp_val`), the argument of one (`exp_arg`), a divisor (`denom`), or
//! the kind of operation (`prod`, `total`, `diff`, `quot`). A value computed
//! from a derivative variable (`d_b`, `x_d`) is a part of that derivative:
//! `d_b_part`. The names are deterministic; [`crate::proc`] makes them
//! unique with a number suffix.
//!
//! A value the reverse sweep pops is named after the value the forward
//! sweep pushed for the same statement ([`PushedNames`]): `exp_val` for
//! the saved `exp(...)`, `d_saved` for a saved variable `d`.

use adjit_ir::print::unary_name;
use adjit_ir::{
    BinaryOp, Const, Inst, Module, Proc, Span, StackKind, Storage, UnaryOp, Value, Var,
};
use std::collections::HashMap;

/// Longest spelling of a whole expression used as a name.
const SPELLED: usize = 16;

/// Longest hint (room for a uniqueness suffix within Fortran's 31).
const LONGEST: usize = 26;

/// How far operands are followed to spell an expression.
const DEPTH: u32 = 4;

/// How many values are searched for a derivative variable an expression
/// reads.
const SEARCHED: usize = 64;

/// The infix word of a binary operation in a spelled name, and the role
/// name of its result.
fn binary_words(op: BinaryOp) -> (&'static str, &'static str) {
    match op {
        BinaryOp::Add => ("p", "total"),
        BinaryOp::Sub => ("m", "diff"),
        BinaryOp::Mul => ("x", "prod"),
        BinaryOp::Div => ("by", "quot"),
        BinaryOp::Pow | BinaryOp::PowI => ("pow", "power"),
        BinaryOp::Min => ("min", "min_val"),
        BinaryOp::Max => ("max", "max_val"),
        BinaryOp::Atan2 => ("atan2", "atan2_val"),
        BinaryOp::Sign => ("sign", "sign_val"),
        BinaryOp::Dim => ("dim", "dim_val"),
        BinaryOp::Mod => ("mod", "mod_val"),
        BinaryOp::Modulo => ("modulo", "modulo_val"),
        BinaryOp::And => ("and", "flag"),
        BinaryOp::Or => ("or", "flag"),
        BinaryOp::Eqv => ("eqv", "flag"),
        BinaryOp::Neqv => ("neqv", "flag"),
    }
}

/// Whether a variable name is a derivative's (`x_d`, `x_b`).
fn is_derivative(name: &str) -> bool {
    name.ends_with("_d") || name.ends_with("_b")
}

/// Names temporaries of one procedure whose variables are called `names`.
pub(crate) struct Namer<'a> {
    /// The procedure.
    pub proc: &'a Proc,
    /// Its variables' Fortran names, by index.
    pub names: &'a [String],
}

impl Namer<'_> {
    /// A short spelling of the expression `v`, if there is one.
    fn spell(&self, v: Value, depth: u32) -> Option<String> {
        if depth == 0 {
            return None;
        }
        let text = match &self.proc.inst(v).kind {
            Inst::Load(x) => self.names[x.index()].clone(),
            Inst::LoadElem(x, idx) => {
                let mut text = self.names[x.index()].clone();
                for &i in idx {
                    text.push('_');
                    text.push_str(&self.spell(i, depth - 1)?);
                }
                text
            }
            // Bounds of an array: `lbound_m`, `size_m_2`.
            Inst::DimLower(x, d) | Inst::DimExtent(x, d) => {
                let word = if matches!(self.proc.inst(v).kind, Inst::DimLower(..)) {
                    "lbound"
                } else {
                    "size"
                };
                let name = &self.names[x.index()];
                match d {
                    0 => format!("{word}_{name}"),
                    _ => format!("{word}_{name}_{}", d + 1),
                }
            }
            Inst::Const(Const::Int(c)) if *c >= 0 => c.to_string(),
            Inst::Const(Const::Int(c)) => format!("m{}", c.unsigned_abs()),
            Inst::Const(Const::Float(f)) if f.fract() == 0.0 && f.abs() < 1e6 => {
                let n = *f as i64;
                if n >= 0 {
                    n.to_string()
                } else {
                    format!("m{}", n.unsigned_abs())
                }
            }
            Inst::Convert(a, _) => self.spell(*a, depth)?,
            Inst::Unary(op, a) => format!("{}_{}", unary_name(*op), self.spell(*a, depth - 1)?),
            Inst::Binary(BinaryOp::Div, a, b) if self.is_one(*a) => {
                format!("inv_{}", self.spell(*b, depth - 1)?)
            }
            // A product with 1 is named after its other factor.
            Inst::Binary(BinaryOp::Mul, a, b) if self.is_one(*a) => self.spell(*b, depth)?,
            Inst::Binary(BinaryOp::Mul, a, b) if self.is_one(*b) => self.spell(*a, depth)?,
            Inst::Binary(op, a, b) => {
                let a = self.spell(*a, depth - 1)?;
                let b = self.spell(*b, depth - 1)?;
                format!("{a}_{}_{b}", binary_words(*op).0)
            }
            _ => return None,
        };
        (text.len() <= SPELLED).then_some(text)
    }

    /// Whether `v` is the constant 1.
    fn is_one(&self, v: Value) -> bool {
        match self.proc.inst(v).kind {
            Inst::Const(Const::Int(c)) => c == 1,
            Inst::Const(Const::Float(f)) => f == 1.0,
            _ => false,
        }
    }

    /// The first derivative variable that `v` reads (operands searched
    /// breadth first, at most [`SEARCHED`] values).
    fn derivative_read(&self, v: Value) -> Option<String> {
        let mut queue = std::collections::VecDeque::from([v]);
        let mut seen = std::collections::HashSet::new();
        while let Some(u) = queue.pop_front() {
            if !seen.insert(u) || seen.len() > SEARCHED {
                continue;
            }
            match &self.proc.inst(u).kind {
                Inst::Load(x) | Inst::LoadElem(x, _) => {
                    if is_derivative(&self.names[x.index()]) {
                        return Some(self.names[x.index()].clone());
                    }
                }
                kind => kind.for_each_operand(|o| queue.push_back(o)),
            }
        }
        None
    }

    /// The name for a temporary holding `v`, whose first use is
    /// `first_use` (an instruction), if any.
    pub fn hint(&self, v: Value, first_use: Option<Value>) -> String {
        // Variable names may be designators (`acc%x`): identifiers only.
        let hint = self
            .choose(v, first_use)
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
        let mut hint: String = hint.chars().take(LONGEST).collect();
        while hint.ends_with('_') {
            hint.pop();
        }
        if !hint.starts_with(|c: char| c.is_ascii_alphabetic()) {
            hint.insert_str(0, "v_");
        }
        hint
    }

    fn choose(&self, v: Value, first_use: Option<Value>) -> String {
        let kind = &self.proc.inst(v).kind;
        if let Inst::Load(x) | Inst::LoadElem(x, _) = kind {
            // A snapshot of a variable or a derivative, or an element
            // spelled with its subscripts (`x_i`).
            let name = &self.names[x.index()];
            return match self.spell(v, DEPTH) {
                Some(text) if !is_derivative(name) && matches!(kind, Inst::LoadElem(..)) => text,
                _ => format!("{name}_val"),
            };
        }
        if let Some(d) = self.derivative_read(v) {
            return format!("{d}_part");
        }
        if let Some(text) = self.spell(v, DEPTH) {
            return text;
        }
        if let Inst::Unary(op, _) = kind {
            if *op != UnaryOp::Neg {
                return format!("{}_val", unary_name(*op));
            }
        }
        match first_use.map(|u| &self.proc.inst(u).kind) {
            Some(Inst::Unary(op, _)) if *op != UnaryOp::Neg => {
                return format!("{}_arg", unary_name(*op))
            }
            Some(Inst::Binary(BinaryOp::Div, _, b)) if *b == v => return "denom".into(),
            _ => {}
        }
        match kind {
            Inst::Binary(op, ..) => binary_words(*op).1.into(),
            Inst::Unary(_, a) => match self.proc.inst(*a).kind {
                Inst::Unary(f, _) => format!("neg_{}", unary_name(f)),
                _ => "neg".into(),
            },
            Inst::Select(..) => "choice".into(),
            Inst::Convert(..) => "conv".into(),
            Inst::Call(..) => "result".into(),
            Inst::CharLen(_) => "len_val".into(),
            Inst::CharIndex(..) => "index_val".into(),
            Inst::Allocated(_) => "is_allocated".into(),
            _ => "val".into(),
        }
    }
}

/// A variable's Fortran name before it is made unique: a local the
/// transforms or the front end made (`_ad_trips1`, `_sub3`) loses its
/// marker (`trips1`, `sub3`).
pub(crate) fn base_name(var: &Var) -> String {
    match var.name.strip_prefix('_') {
        Some(made) if var.storage == Storage::Local => {
            crate::ident(made.strip_prefix("ad_").unwrap_or(made))
        }
        _ => crate::ident(&var.name),
    }
}

/// The names of the values pushed on the value stack, by the statement
/// (span) that pushes them: for each block that pushes for a statement,
/// the names in push order.
#[derive(Debug, Default)]
pub(crate) struct PushedNames(HashMap<Span, Vec<Vec<String>>>);

impl PushedNames {
    /// Collects the value-stack pushes of every procedure of `module`.
    pub fn new(module: &Module) -> PushedNames {
        let mut map: HashMap<Span, Vec<Vec<String>>> = HashMap::new();
        for proc in &module.procs {
            let names: Vec<String> = proc.vars.iter().map(base_name).collect();
            let namer = Namer {
                proc,
                names: &names,
            };
            for block in &proc.blocks {
                let mut here: HashMap<Span, Vec<String>> = HashMap::new();
                let mut order = Vec::new();
                for &v in &block.insts {
                    let data = proc.inst(v);
                    if let Inst::Push(StackKind::Value, x) = data.kind {
                        let name = match proc.inst(x).kind {
                            Inst::Load(var) => format!("{}_saved", names[var.index()]),
                            _ => namer.hint(x, None),
                        };
                        if !here.contains_key(&data.span) {
                            order.push(data.span);
                        }
                        here.entry(data.span).or_default().push(name);
                    }
                }
                for span in order {
                    let list = here.remove(&span).unwrap_or_default();
                    map.entry(span).or_default().push(list);
                }
            }
        }
        PushedNames(map)
    }

    /// The name of the `k`-th of `n` values popped for the statement at
    /// `span` in one block (pops come in the reverse order of the pushes),
    /// when every block pushing `n` values for it agrees on it.
    pub fn popped(&self, span: Span, k: usize, n: usize) -> Option<String> {
        let mut found: Option<&String> = None;
        for list in self.0.get(&span)?.iter().filter(|l| l.len() == n) {
            let name = &list[n - 1 - k];
            if found.is_some_and(|f| f != name) {
                return None;
            }
            found = Some(name);
        }
        found.cloned()
    }
}
