//! A deterministic generator of random, valid Fortran programs for the
//! differential derivative tester (`tests/random_fortran.rs`).
//!
//! [`generate`] turns a seed into a [`Program`]: one module `rfmod` holding
//! module variables (scalars, a small array, a branch `trace` and a reset
//! `epoch`), a few subroutines and functions (each may call the ones
//! generated before it, so there is no recursion), and the entry
//!
//! ```text
//! subroutine top(n, mode, x, s, y, r, path)   ! x(n), s in; y(n), r out
//! ```
//!
//! whose active inputs are `x` and `s` and active outputs `y` and `r`.
//! Bodies mix assignments of nonlinear expressions, branches on active
//! values, DO loops with computed (active-dependent) trip counts, DO WHILE
//! loops, EXIT, calls passing arrays and scalars, module variables (some
//! of them components of a derived-type module variable) written
//! in one call and read in another, SAVE locals, ALLOCATABLE local arrays
//! (allocated with computed bounds, reallocated, passed to callees; see
//! `random_fortran/alloc.rs`), an ALLOCATABLE module array allocated by
//! `top` and reallocated by callees (`random_fortran/module_alloc.rs`),
//! array intrinsics on active data with DIM= and MASK=
//! (`random_fortran/intrinsics.rs`), and (optionally) intrinsics at their
//! singular points.
//!
//! Validity by construction (gfortran accepts every program, and none has
//! undefined behaviour): every variable is initialised before it is read,
//! every real variable holds a value of magnitude at most [`BOUND`] (stores
//! of possibly larger expressions go through a bounded function), divisions
//! have denominators of at least 1, `exp` only sees bounded arguments,
//! subscripts stay in `1..n` with `n` in `1..=4`, loops terminate, no actual
//! argument is passed twice or aliases a module variable, and functions have
//! no side effects.
//!
//! Every branch decision and every computed trip count is folded into the
//! module variable `trace`, which `top` copies to `path`: two evaluations
//! took the same control path only if their `path`s agree. The tester uses
//! it to keep finite differences away from branch switches.
//!
//! State: `top` resets the module variables (and, through `epoch`, every
//! SAVE local) at its start; with [`GenOptions::persistent_state`] it does
//! so only when `mode == 1`, so that state carries from one evaluation to
//! the next unless the caller asks for a fresh start.

use super::random_ir::Rng;
use std::fmt::Write as _;

mod alloc;
mod constructs;
mod derived;
mod intrinsics;
mod masked;
mod module_alloc;
mod module_matrix;
mod sections;

/// Largest magnitude any real variable holds.
pub const BOUND: f64 = 4.0;
/// Largest magnitude an intermediate expression may reach.
const EXPR_LIMIT: f64 = 1000.0;
/// The modulus of the branch trace.
const TRACE_MOD: u32 = 1_000_003;

/// Which features a generated program may use. Each switch names one class
/// of construct, so that a class hitting a known bug can be avoided while
/// the rest keeps being tested.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenOptions {
    /// Module variables hold active values (written by `top` and by
    /// subroutines) and subroutines keep SAVE locals, so that a global
    /// written in one place is read in a later call (off: module variables
    /// keep the constants `top` resets them to, and are only read).
    pub globals_across_calls: bool,
    /// Module and SAVE state carries from one evaluation to the next (off:
    /// `top` resets it on every call).
    pub persistent_state: bool,
    /// Intrinsics at their singular points: `sqrt(0)`, `0**y`, `abs(0)`,
    /// singular values deciding branches whose other side uses them.
    pub singular_points: bool,
    /// Subroutines may overwrite an inout dummy with a value that does not
    /// depend on the active inputs (off: every store to an inout dummy
    /// keeps half the old value).
    pub passive_overwrite: bool,
    /// Module scalars after the first are components of a derived-type
    /// module variable `gs` (with component defaults), read and written
    /// as `gs%g2`.
    pub derived_globals: bool,
    /// A last scalar intent(in) dummy of a subprocedure is OPTIONAL (the
    /// body reads a local copy set under PRESENT); every other call leaves
    /// it out, the others pass it by keyword.
    pub optional_args: bool,
    /// A call of a function of one scalar goes through `via(f, x)`, which
    /// takes the function as a dummy procedure (`external f`) and calls it
    /// (the random choices, hence the rest of the program, are the same
    /// either way).
    pub dummy_procedures: bool,
    /// RECURSIVE functions of the depth `n` and one scalar: directly
    /// recursive (`rec1` calls itself) or mutually recursive (`rec1` and
    /// `rec2` call each other), with random contractions so values stay
    /// bounded; calls to them appear wherever generated functions do.
    pub recursive: bool,
    /// Most subprocedures (besides `top`).
    pub max_procs: usize,
    /// Most statements per body (top level of a procedure).
    pub max_stmts: usize,
    /// Deepest nesting of blocks.
    pub max_depth: usize,
    /// Procedures with `n` may hold an ALLOCATABLE local array, allocated
    /// with computed bounds, reallocated (by assignment and by DEALLOCATE /
    /// ALLOCATE) and passed to callees (see `random_fortran/alloc.rs`).
    pub allocatable_locals: bool,
    /// Subroutines may take an ALLOCATABLE intent(inout) array dummy, given
    /// an allocatable array of the caller (see `random_fortran/alloc.rs`).
    pub allocatable_dummies: bool,
    /// Array sections (strided, reversed, overlapping, matrix columns) in
    /// assignments, reductions and as actual arguments of explicit-shape,
    /// assumed-size and assumed-shape dummies (see
    /// `random_fortran/sections.rs`).
    pub array_sections: bool,
    /// WHERE / ELSEWHERE constructs (nested) and FORALL statements with
    /// masks on active values (see `random_fortran/masked.rs`).
    pub masked_arrays: bool,
    /// A module derived type with real, array and integer components:
    /// structures as locals, dummies (intent in / inout), a module
    /// variable, arrays of structures, constructors, whole assignment and
    /// `%` in expressions (see `random_fortran/derived.rs`).
    pub derived_types: bool,
    /// Array intrinsics on active data: reductions with DIM= and MASK=,
    /// MAXLOC / MINLOC, COUNT / ANY / ALL, MATMUL, TRANSPOSE, SPREAD,
    /// CSHIFT / EOSHIFT, PACK / UNPACK, MERGE, RESHAPE, NORM2 (see
    /// `random_fortran/intrinsics.rs`).
    pub array_intrinsics: bool,
    /// An ALLOCATABLE module array `ma(:)`, allocated and released by
    /// `top`, read by every procedure with `n` and written and reallocated
    /// by the subroutines (see `random_fortran/module_alloc.rs`).
    pub module_allocatables: bool,
    /// Array intrinsics inside functions (see
    /// `random_fortran/constructs.rs`).
    pub function_intrinsics: bool,
    /// ASSOCIATE and BLOCK constructs around statements (see
    /// `random_fortran/constructs.rs`).
    pub block_constructs: bool,
    /// CHARACTER data built with CHAR and read with ICHAR / INDEX deciding
    /// branches and trip counts (see `random_fortran/constructs.rs`).
    pub character_control: bool,
    /// A rank-2 ALLOCATABLE module array `mb(:, :)` (see
    /// `random_fortran/module_matrix.rs`).
    pub module_matrix: bool,
}

impl GenOptions {
    /// Every feature on.
    pub fn all() -> GenOptions {
        GenOptions {
            globals_across_calls: true,
            persistent_state: true,
            singular_points: true,
            passive_overwrite: true,
            derived_globals: true,
            optional_args: true,
            dummy_procedures: true,
            recursive: true,
            max_procs: 4,
            max_stmts: 6,
            max_depth: 2,
            allocatable_locals: true,
            allocatable_dummies: true,
            array_sections: true,
            masked_arrays: true,
            derived_types: true,
            array_intrinsics: true,
            module_allocatables: true,
            function_intrinsics: true,
            block_constructs: true,
            character_control: true,
            module_matrix: true,
        }
    }
}

/// A statement: one line, or a block with a body (and an optional ELSE).
#[derive(Clone, Debug)]
pub enum Stmt {
    /// One line of code.
    Line(String),
    /// One line the reducer must keep (loop counters, trip counts: removing
    /// them would make a loop endless or read an undefined value).
    Keep(String),
    /// `head` / body / [`else` / else body] / `tail`.
    Block {
        /// The opening line (`if (...) then`, `do i = ...`).
        head: String,
        /// The body.
        body: Vec<Stmt>,
        /// The ELSE part, if any.
        else_body: Option<Vec<Stmt>>,
        /// The closing line.
        tail: String,
    },
}

/// One generated procedure.
#[derive(Clone, Debug)]
pub struct ProcSrc {
    /// The header and declarations (never removed by reduction).
    pub head: Vec<String>,
    /// Initialisations every body relies on (never removed).
    pub init: Vec<Stmt>,
    /// The statements (reduction removes these).
    pub body: Vec<Stmt>,
    /// Statements after the body (never removed).
    pub finish: Vec<Stmt>,
    /// The END line.
    pub end: String,
}

/// A generated program, kept as a structure so that a reducer can delete
/// statements and procedures.
#[derive(Clone, Debug)]
pub struct Program {
    /// The seed it came from.
    pub seed: u64,
    /// The options it was generated with.
    pub options: GenOptions,
    /// The module's declarations (module variables).
    pub decls: Vec<String>,
    /// The procedures, `top` last.
    pub procs: Vec<ProcSrc>,
}

impl Program {
    /// The Fortran source text.
    pub fn source(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "! random program, seed {}", self.seed);
        s.push_str("module rfmod\n  implicit none\n");
        for d in &self.decls {
            let _ = writeln!(s, "  {d}");
        }
        s.push_str("contains\n");
        for p in &self.procs {
            for h in &p.head {
                let _ = writeln!(s, "  {h}");
            }
            for st in p.init.iter().chain(&p.body).chain(&p.finish) {
                write_stmt(&mut s, st, 2);
            }
            let _ = writeln!(s, "  {}", p.end);
        }
        s.push_str("end module rfmod\n");
        s
    }

    /// Number of removable statements (blocks count with their contents).
    pub fn statement_count(&self) -> usize {
        fn count(stmts: &[Stmt]) -> usize {
            stmts
                .iter()
                .map(|s| match s {
                    Stmt::Line(_) => 1,
                    Stmt::Keep(_) => 0,
                    Stmt::Block {
                        body, else_body, ..
                    } => 1 + count(body) + else_body.as_deref().map_or(0, count),
                })
                .sum()
        }
        self.procs.iter().map(|p| count(&p.body)).sum()
    }

    /// The program without removable statement `k` (in the order of
    /// [`Program::statement_count`]), or `None` when `k` is out of range.
    pub fn without_statement(&self, k: usize) -> Option<Program> {
        fn remove(stmts: &mut Vec<Stmt>, k: &mut usize) -> bool {
            let mut i = 0;
            while i < stmts.len() {
                if matches!(stmts[i], Stmt::Keep(_)) {
                    i += 1;
                    continue;
                }
                if *k == 0 {
                    stmts.remove(i);
                    return true;
                }
                *k -= 1;
                if let Stmt::Block {
                    body, else_body, ..
                } = &mut stmts[i]
                {
                    if remove(body, k) {
                        return true;
                    }
                    if let Some(e) = else_body {
                        if remove(e, k) {
                            return true;
                        }
                    }
                }
                i += 1;
            }
            false
        }
        let mut p = self.clone();
        let mut k = k;
        for proc in &mut p.procs {
            if remove(&mut proc.body, &mut k) {
                return Some(p);
            }
        }
        None
    }

    /// The program without procedure `i` (never `top`), or `None`.
    pub fn without_proc(&self, i: usize) -> Option<Program> {
        if i + 1 >= self.procs.len() {
            return None;
        }
        let mut p = self.clone();
        p.procs.remove(i);
        Some(p)
    }
}

fn write_stmt(s: &mut String, st: &Stmt, indent: usize) {
    let pad = " ".repeat(indent);
    match st {
        Stmt::Line(l) | Stmt::Keep(l) => write_line(s, &pad, l),
        Stmt::Block {
            head,
            body,
            else_body,
            tail,
        } => {
            // A block's head (an IF condition) may be as long as a line.
            write_line(s, &pad, head);
            for b in body {
                write_stmt(s, b, indent + 2);
            }
            if let Some(e) = else_body {
                let _ = writeln!(s, "{pad}else");
                for b in e {
                    write_stmt(s, b, indent + 2);
                }
            }
            let _ = writeln!(s, "{pad}{tail}");
        }
    }
}

/// Writes one source line after `pad`: free form allows 132 columns, so a
/// long line continues at a blank.
fn write_line(s: &mut String, pad: &str, l: &str) {
    let mut rest = l;
    let mut first = true;
    while rest.len() > 90 {
        // Right after a blank, comma or parenthesis: never inside a
        // token.
        let cut = rest[..90]
            .rfind([' ', ',', '('])
            .map(|c| c + 1)
            .unwrap_or(90);
        let lead = if first { "" } else { "    " };
        let _ = writeln!(s, "{pad}{lead}{} &", &rest[..cut]);
        rest = rest[cut..].trim_start();
        first = false;
    }
    let lead = if first { "" } else { "    " };
    let _ = writeln!(s, "{pad}{lead}{rest}");
}

/// A real literal that Fortran reads as this double.
fn lit(x: f64) -> String {
    let t = format!("{x:?}");
    let t = if t.contains('.') || t.contains('e') {
        t
    } else {
        format!("{t}.0")
    };
    let t = if let Some((m, e)) = t.split_once('e') {
        format!("{m}d{e}")
    } else {
        format!("{t}d0")
    };
    if x < 0.0 {
        format!("({t})")
    } else {
        t
    }
}

/// A small "nice" constant of magnitude 0.125 to 2.
fn constant(rng: &mut Rng) -> f64 {
    let c = rng.range(1, 16) as f64 / 8.0;
    if rng.chance(30) {
        -c
    } else {
        c
    }
}

/// What a procedure's code may name.
#[derive(Clone, Default)]
struct Scope {
    /// Real scalars that may be read.
    reals: Vec<String>,
    /// Real scalars that may be written (locals, writable dummies, and
    /// module scalars where allowed).
    writable: Vec<String>,
    /// Real arrays of at least `n` elements that may be read.
    arrays: Vec<String>,
    /// Real arrays of `n` elements that may be written.
    writable_arrays: Vec<String>,
    /// Index expressions valid in `1..n`.
    indices: Vec<String>,
    /// Free integer loop variables.
    free_loop_vars: Vec<String>,
    /// Free integer scratch variables (trip counts, counters).
    free_ints: Vec<String>,
    /// Whether `n` exists here.
    has_n: bool,
    /// Whether this code may write `trace` (not in functions).
    may_trace: bool,
    /// Whether this is a function body (no calls to subroutines).
    in_function: bool,
    /// Loop nesting (EXIT is valid inside a DO).
    in_loop: bool,
    /// The writable dummies (inout scalars and arrays).
    dummies_out: Vec<String>,
    /// ALLOCATABLE local arrays (always allocated, covering `1..n`).
    allocs: Vec<String>,
    /// ALLOCATABLE dummy arrays (allocated, covering `1..n`, never
    /// reallocated).
    alloc_dummies: Vec<String>,
    /// Assumed-size dummy arrays (never passed whole).
    assumed_size: Vec<String>,
    /// Local matrices of `n` rows and 3 columns (read and written through
    /// sections).
    matrices: Vec<String>,
    /// Whether the structures `p1`, `p2` and `q(2)` exist here.
    structs: bool,
    /// Whether the matrix `sq(n, n)` and the scratch `il`, `im` of
    /// `random_fortran/intrinsics.rs` exist here.
    intrinsics: bool,
    /// Whether the ALLOCATABLE module array may be written and reallocated
    /// here.
    module_alloc: bool,
    /// Whether the module matrix of `random_fortran/module_matrix.rs` may
    /// be read here, and written.
    matrix_reads: bool,
    matrix_writes: bool,
}

/// A callable procedure already generated.
#[derive(Clone)]
struct Callee {
    name: String,
    is_function: bool,
    /// The dummies after `n` (if any), in order.
    params: Vec<Param>,
    has_n: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Param {
    ScalarIn,
    /// An OPTIONAL intent(in) scalar (always last).
    ScalarOpt,
    ScalarInOut,
    ArrayIn,
    ArrayInOut,
    /// An ALLOCATABLE intent(inout) array (subroutines with `n` only).
    AllocInOut,
}

struct Gen<'a> {
    rng: Rng,
    opt: &'a GenOptions,
    callees: Vec<Callee>,
    /// Module real scalars and the module array.
    globals: Vec<String>,
    /// Module scalars only `top` advances (passive state).
    counters: Vec<String>,
    global_array: String,
    /// Calls to procedures with an OPTIONAL dummy so far (odd ones leave
    /// it out).
    optional_calls: usize,
    /// The ALLOCATABLE dummies of this program are ones the subroutines
    /// allocate (see `random_fortran/alloc.rs`).
    callee_allocates: bool,
    /// Statements the procedure being generated runs last (releasing its
    /// SAVE allocatable, see `random_fortran/alloc.rs`).
    release: Vec<Stmt>,
    /// The ALLOCATABLE module arrays (never actual arguments).
    module_arrays: Vec<String>,
    /// Whether the program has the module matrix of
    /// `random_fortran/module_matrix.rs`.
    module_matrix: bool,
    /// Names given so far to associate names and BLOCK variables (each
    /// is new: `z3`, `cw4`).
    construct_names: usize,
}

/// Generates the program of `seed`.
pub fn generate(seed: u64, options: &GenOptions) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xF0F0),
        opt: options,
        callees: Vec::new(),
        globals: Vec::new(),
        counters: Vec::new(),
        global_array: "ga".into(),
        optional_calls: 0,
        callee_allocates: options.allocatable_dummies && seed % 2 == 1,
        release: Vec::new(),
        module_arrays: Vec::new(),
        module_matrix: false,
        construct_names: 0,
    };
    let nglobals = g.rng.range(1, 3) as usize;
    let mut decls = Vec::new();
    let mut resets = Vec::new();
    let mut components = Vec::new();
    for k in 1..=nglobals {
        let v = constant(&mut g.rng);
        let name = if options.derived_globals && k >= 2 {
            components.push(format!("  double precision :: g{k} = {}", lit(v)));
            format!("gs%g{k}")
        } else {
            decls.push(format!("double precision :: g{k} = {}", lit(v)));
            format!("g{k}")
        };
        resets.push(Stmt::Line(format!("{name} = {}", lit(v))));
        g.globals.push(name);
    }
    if !components.is_empty() {
        decls.push("type gstate".into());
        decls.append(&mut components);
        decls.push("end type gstate".into());
        decls.push("type(gstate) :: gs".into());
    }
    // One value for every element: the front end rejects an array
    // constructor as a module variable's initializer (see
    // tests/random_fortran_findings.rs).
    let init = lit(constant(&mut g.rng));
    decls.push(format!("double precision :: ga(4) = {init}"));
    resets.push(Stmt::Line(format!("ga = {init}")));
    g.module_alloc_decl(&mut decls);
    g.module_matrix_decl(&mut decls);
    if options.persistent_state {
        // A counter every evaluation advances (issue 10 item 6's `acc`).
        decls.push("double precision :: cnt = 0d0".into());
        resets.push(Stmt::Line("cnt = 0d0".into()));
        g.counters.push("cnt".into());
    }
    decls.push("integer :: trace = 0".into());
    decls.push("integer :: epoch = 0".into());
    resets.push(Stmt::Line("epoch = epoch + 1".into()));

    let mut procs = Vec::new();
    if options.derived_types {
        procs.extend(g.derived_module(&mut decls, &mut resets));
    }
    let nprocs = g.rng.range(1, options.max_procs.max(1) as i64) as usize;
    if options.recursive && g.rng.chance(50) {
        procs.extend(g.recursive_functions());
    }
    for k in 1..=nprocs {
        let is_function = g.rng.chance(35);
        procs.push(g.callee(k, is_function));
    }
    if options.dummy_procedures {
        procs.push(via());
    }
    procs.push(g.top(resets));
    Program {
        seed,
        options: options.clone(),
        decls,
        procs,
    }
}

/// `via(f, x) = f(x)`: a function of one scalar passed as a dummy
/// procedure.
fn via() -> ProcSrc {
    ProcSrc {
        head: vec![
            "double precision function via(f, x)".into(),
            "double precision, external :: f".into(),
            "double precision, intent(in) :: x".into(),
        ],
        init: Vec::new(),
        body: Vec::new(),
        finish: vec![Stmt::Line("via = f(x)".into())],
        end: "end function via".into(),
    }
}

impl Gen<'_> {
    /// A trace update recording decision `k`.
    fn trace(&mut self, what: &str) -> Stmt {
        Stmt::Line(format!("trace = mod(trace*7 + {what}, {TRACE_MOD})"))
    }

    /// An index expression valid in `1..n`.
    fn index(&mut self, scope: &Scope) -> String {
        self.rng.pick_str(&scope.indices)
    }

    /// A leaf: a variable, an array element or a constant, with its bound.
    fn leaf(&mut self, scope: &Scope) -> (String, f64) {
        match self.rng.below(10) {
            0..=4 if !scope.reals.is_empty() => (self.rng.pick_str(&scope.reals), BOUND),
            5..=7 if !scope.arrays.is_empty() && !scope.indices.is_empty() => {
                let a = self.rng.pick_str(&scope.arrays);
                let i = self.index(scope);
                (format!("{a}({i})"), BOUND)
            }
            8 if scope.indices.len() > 1 => {
                // A loop index as a real (indices are at most 4).
                let i = self.index(scope);
                (format!("dble({i})"), 4.0)
            }
            _ => {
                let c = constant(&mut self.rng);
                (lit(c), c.abs())
            }
        }
    }

    /// A random expression of real type and its bound on magnitude.
    fn expr(&mut self, scope: &Scope, depth: usize) -> (String, f64) {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(scope);
        }
        let singular = self.opt.singular_points;
        match self.rng.below(22) {
            0 => {
                let (e, _) = self.expr(scope, depth - 1);
                (format!("sin({e})"), 1.0)
            }
            1 => {
                let (e, _) = self.expr(scope, depth - 1);
                (format!("cos({e})"), 1.0)
            }
            2 => {
                let (e, _) = self.expr(scope, depth - 1);
                (format!("tanh({e})"), 1.0)
            }
            3 => {
                let (e, _) = self.expr(scope, depth - 1);
                (format!("atan({e})"), 1.6)
            }
            4 => {
                let (e, b) = self.expr(scope, depth - 1);
                if b <= 4.0 {
                    (format!("exp({e})"), b.exp())
                } else {
                    (format!("exp(sin({e}))"), 1f64.exp())
                }
            }
            5 => {
                let (e, b) = self.expr(scope, depth - 1);
                (format!("log(1d0 + ({e})**2)"), (1.0 + b * b).ln())
            }
            6 => {
                let (e, b) = self.expr(scope, depth - 1);
                (format!("sqrt(1d0 + ({e})**2)"), (1.0 + b * b).sqrt())
            }
            7 => {
                let (e, b) = self.expr(scope, depth - 1);
                let k = self.rng.range(2, 3) as i32;
                if b.powi(k) <= EXPR_LIMIT {
                    (format!("({e})**{k}"), b.powi(k))
                } else {
                    (format!("sin({e})**{k}"), 1.0)
                }
            }
            8 => {
                let (e, b) = self.expr(scope, depth - 1);
                (format!("abs({e})"), b)
            }
            9 => {
                let (e, b) = self.expr(scope, depth - 1);
                (format!("(-({e}))"), b)
            }
            10 | 11 => {
                let (a, ba) = self.expr(scope, depth - 1);
                let (b, bb) = self.expr(scope, depth - 1);
                let op = if self.rng.chance(50) { "+" } else { "-" };
                (format!("({a} {op} {b})"), ba + bb)
            }
            12 | 13 => {
                let (a, ba) = self.expr(scope, depth - 1);
                let (b, bb) = self.expr(scope, depth - 1);
                if ba * bb <= EXPR_LIMIT {
                    (format!("({a})*({b})"), ba * bb)
                } else {
                    (format!("sin({a})*({b})"), bb)
                }
            }
            14 => {
                let (a, ba) = self.expr(scope, depth - 1);
                let (b, _) = self.expr(scope, depth - 1);
                let c = self.rng.range(1, 3) as f64 * 0.5 + 0.5;
                (format!("({a})/({} + ({b})**2)", lit(c)), ba / c)
            }
            15 => {
                let (a, ba) = self.expr(scope, depth - 1);
                let (b, bb) = self.expr(scope, depth - 1);
                (format!("max({a}, {b})"), ba.max(bb))
            }
            16 => {
                let (a, ba) = self.expr(scope, depth - 1);
                let (b, bb) = self.expr(scope, depth - 1);
                (format!("min({a}, {b})"), ba.max(bb))
            }
            17 => {
                // A positive base to a bounded real power.
                let (a, ba) = self.expr(scope, depth - 1);
                let (b, _) = self.expr(scope, depth - 1);
                let base = 1.0 + ba * ba;
                (
                    format!("(1d0 + ({a})**2)**(0.5d0*sin({b}))"),
                    base.sqrt().max(1.0),
                )
            }
            18 if !self.callees.iter().all(|c| !c.is_function) => self.function_call(scope, depth),
            19 if singular => {
                // sqrt at zero whenever the argument is negative.
                let (e, b) = self.expr(scope, depth - 1);
                (format!("sqrt(max({e}, 0d0))"), b.sqrt())
            }
            20 if singular => {
                // 0**y whenever the base's argument is negative.
                let (e, b) = self.expr(scope, depth - 1);
                let (y, _) = self.expr(scope, depth - 1);
                let bound = b.max(1.0).powf(2.5);
                if bound <= EXPR_LIMIT {
                    (format!("max({e}, 0d0)**(2d0 + 0.5d0*sin({y}))"), bound)
                } else {
                    (format!("max(sin({e}), 0d0)**(2d0 + 0.5d0*sin({y}))"), 1.0)
                }
            }
            21 if singular => {
                // abs at zero whenever the argument is negative.
                let (e, b) = self.expr(scope, depth - 1);
                let (f, bf) = self.expr(scope, depth - 1);
                (format!("abs(max({e}, 0d0))*({f})"), b * bf)
            }
            _ => self.leaf(scope),
        }
    }

    /// The actual argument for the OPTIONAL dummy `oK` (the last dummy),
    /// by keyword, or `None` on every other such call.
    fn optional_actual(&mut self, scope: &Scope, depth: usize, k: usize) -> Option<String> {
        self.optional_calls += 1;
        if self.optional_calls.is_multiple_of(2) {
            return None;
        }
        Some(format!("o{k}=({})", self.expr(scope, depth).0))
    }

    /// A call of a generated function inside an expression.
    fn function_call(&mut self, scope: &Scope, depth: usize) -> (String, f64) {
        let fs: Vec<Callee> = self
            .callees
            .iter()
            .filter(|c| c.is_function && (!c.has_n || scope.has_n))
            .cloned()
            .collect();
        if fs.is_empty() {
            return self.leaf(scope);
        }
        let f = fs[self.rng.below(fs.len())].clone();
        let mut args = Vec::new();
        if f.has_n {
            args.push("n".to_string());
        }
        for p in &f.params {
            match p {
                Param::ScalarIn => {
                    args.push(format!("({})", self.expr(scope, depth.saturating_sub(2)).0))
                }
                Param::ScalarOpt => {
                    let k = f.params.len();
                    if let Some(a) = self.optional_actual(scope, depth.saturating_sub(2), k) {
                        args.push(a);
                    }
                }
                Param::ArrayIn if !scope.arrays.is_empty() => {
                    let a = self.rng.pick_str(&scope.arrays);
                    args.push(self.array_actual(scope, &a, &[]))
                }
                _ => return self.leaf(scope),
            }
        }
        if self.opt.dummy_procedures && !f.has_n && f.params == [Param::ScalarIn] {
            return (format!("via({}, {})", f.name, args[0]), BOUND);
        }
        (format!("{}({})", f.name, args.join(", ")), BOUND)
    }

    /// `target = expr`, passing the value through a bounded function when
    /// it could exceed [`BOUND`].
    fn store(&mut self, target: &str, scope: &Scope, depth: usize) -> Stmt {
        let (e, b) = self.expr(scope, depth);
        let rhs = if b <= BOUND {
            e
        } else {
            match self.rng.below(4) {
                0 => format!("tanh({e})"),
                1 => format!("atan({e})"),
                2 => format!("4d0*tanh(0.25d0*({e}))"),
                _ => format!("sin({e})"),
            }
        };
        let base = target.split('(').next().unwrap_or(target);
        if !self.opt.passive_overwrite && scope.dummies_out.iter().any(|d| d == base) {
            // Keep the old value in: the store is active whenever the dummy
            // is.
            return Stmt::Line(format!("{target} = 0.5d0*{target} + 0.5d0*({rhs})"));
        }
        Stmt::Line(format!("{target} = {rhs}"))
    }

    /// A condition on active values.
    fn condition(&mut self, scope: &Scope) -> String {
        let (a, _) = self.expr(scope, 2);
        let (b, _) = self.expr(scope, 1);
        let op = self.rng.pick_str(&[">", "<", ">=", "<="].map(String::from));
        format!("{a} {op} {b}")
    }

    /// A list of statements.
    fn stmts(&mut self, scope: &mut Scope, count: usize, depth: usize) -> Vec<Stmt> {
        (0..count).flat_map(|_| self.stmt(scope, depth)).collect()
    }

    /// One statement (or a short group).
    fn stmt(&mut self, scope: &mut Scope, depth: usize) -> Vec<Stmt> {
        if !scope.allocs.is_empty() && self.rng.chance(15) {
            return self.allocatable_stmt(scope);
        }
        if self.opt.array_sections && self.rng.chance(15) {
            return self.section_stmt(scope);
        }
        if self.opt.masked_arrays && self.rng.chance(10) {
            return self.masked_stmt(scope);
        }
        if scope.structs && self.rng.chance(15) {
            return self.derived_stmt(scope);
        }
        if scope.module_alloc && self.rng.chance(8) {
            return self.module_alloc_stmt(scope);
        }
        if scope.intrinsics && self.rng.chance(25) {
            return self.intrinsic_stmt(scope);
        }
        if scope.in_function && self.opt.function_intrinsics && self.rng.chance(20) {
            return self.function_intrinsic_stmt(scope);
        }
        if scope.matrix_reads && self.rng.chance(10) {
            return self.module_matrix_stmt(scope);
        }
        if self.opt.block_constructs && self.rng.chance(6) {
            return self.block_construct(scope, depth);
        }
        if self.opt.character_control && self.rng.chance(6) {
            return self.character_control(scope, depth);
        }
        let nested = depth < self.opt.max_depth;
        match self.rng.below(12) {
            0..=2 if !scope.writable.is_empty() => {
                let t = self.rng.pick_str(&scope.writable);
                vec![self.store(&t, scope, 3)]
            }
            3 if !scope.writable_arrays.is_empty() && scope.has_n => {
                // An element-wise loop over an array.
                let Some(i) = scope.free_loop_vars.pop() else {
                    return vec![];
                };
                let a = self.rng.pick_str(&scope.writable_arrays);
                scope.indices.push(i.clone());
                let body = vec![self.store(&format!("{a}({i})"), scope, 3)];
                scope.indices.pop();
                scope.free_loop_vars.push(i.clone());
                vec![Stmt::Block {
                    head: format!("do {i} = 1, n"),
                    body,
                    else_body: None,
                    tail: "end do".into(),
                }]
            }
            4 | 5 if nested => self.branch(scope, depth),
            6 if nested && scope.has_n => self.computed_loop(scope, depth),
            7 if nested && !scope.writable.is_empty() => self.while_loop(scope, depth),
            8 if scope.in_loop && scope.may_trace => {
                let c = self.condition(scope);
                vec![Stmt::Block {
                    head: format!("if ({c}) then"),
                    body: vec![self.trace("5"), Stmt::Line("exit".into())],
                    else_body: None,
                    tail: "end if".into(),
                }]
            }
            9 | 10 if !scope.in_function => self.call(scope),
            11 if self.opt.singular_points && nested && !scope.writable.is_empty() => {
                self.singular_branch(scope, depth)
            }
            _ => {
                if scope.writable.is_empty() {
                    vec![]
                } else {
                    let t = self.rng.pick_str(&scope.writable);
                    vec![self.store(&t, scope, 2)]
                }
            }
        }
    }

    /// IF / ELSE on active values, recording the decision.
    fn branch(&mut self, scope: &mut Scope, depth: usize) -> Vec<Stmt> {
        let c = self.condition(scope);
        let n = self.rng.range(1, 2) as usize;
        let mut body = Vec::new();
        let mut other = Vec::new();
        if scope.may_trace {
            body.push(self.trace("1"));
            other.push(self.trace("2"));
        }
        body.extend(self.stmts(scope, n, depth + 1));
        other.extend(self.stmts(scope, n, depth + 1));
        let else_body = (self.rng.chance(70) || scope.may_trace).then_some(other);
        vec![Stmt::Block {
            head: format!("if ({c}) then"),
            body,
            else_body,
            tail: "end if".into(),
        }]
    }

    /// The optimal-design pattern: `t = sqrt(max(e, 0))` decides a branch
    /// and feeds the side not taken.
    fn singular_branch(&mut self, scope: &mut Scope, depth: usize) -> Vec<Stmt> {
        let t = self.rng.pick_str(&scope.writable);
        if !self.opt.passive_overwrite && scope.dummies_out.contains(&t) {
            return vec![];
        }
        let (e, _) = self.expr(scope, 2);
        let (f, _) = self.expr(scope, 1);
        let c = lit(self.rng.range(1, 8) as f64 / 8.0);
        let mut body = Vec::new();
        let mut other = Vec::new();
        if scope.may_trace {
            body.push(self.trace("3"));
            other.push(self.trace("4"));
        }
        body.push(Stmt::Line(format!("{t} = 0.5d0*tanh({t}*({f}))")));
        other.extend(self.stmts(scope, 1, depth + 1));
        vec![
            Stmt::Line(format!("{t} = 2d0*sqrt(max(tanh({e}), 0d0))")),
            Stmt::Block {
                head: format!("if ({t} <= {c}) then"),
                body: other,
                else_body: Some(body),
                tail: "end if".into(),
            },
        ]
    }

    /// A DO loop whose trip count depends on an active value.
    fn computed_loop(&mut self, scope: &mut Scope, depth: usize) -> Vec<Stmt> {
        if scope.free_ints.is_empty() || scope.free_loop_vars.is_empty() {
            return vec![];
        }
        let k = scope.free_ints.pop().unwrap();
        let i = scope.free_loop_vars.pop().unwrap();
        let (e, _) = self.expr(scope, 2);
        let mut out = vec![Stmt::Keep(format!("{k} = min(n, 1 + int(abs({e})))"))];
        if scope.may_trace {
            out.push(self.trace(&k));
        }
        let reverse = self.rng.chance(30);
        let head = if reverse {
            format!("do {i} = {k}, 1, -1")
        } else if self.rng.chance(50) {
            format!("do {i} = 1, {k}")
        } else {
            format!("do {i} = {k}, n")
        };
        scope.indices.push(i.clone());
        let was_in_loop = std::mem::replace(&mut scope.in_loop, true);
        let n = self.rng.range(1, 3) as usize;
        let body = self.stmts(scope, n, depth + 1);
        scope.in_loop = was_in_loop;
        scope.indices.pop();
        out.push(Stmt::Block {
            head,
            body,
            else_body: None,
            tail: "end do".into(),
        });
        scope.free_loop_vars.push(i);
        scope.free_ints.push(k);
        out
    }

    /// A DO WHILE loop on an active value, at most 4 iterations.
    fn while_loop(&mut self, scope: &mut Scope, depth: usize) -> Vec<Stmt> {
        let Some(it) = scope.free_ints.pop() else {
            return vec![];
        };
        let v = self.rng.pick_str(&scope.writable);
        let (e, _) = self.expr(scope, 1);
        let c = lit(constant(&mut self.rng).abs());
        let mut body = vec![Stmt::Keep(format!("{it} = {it} + 1"))];
        let was_in_loop = std::mem::replace(&mut scope.in_loop, true);
        // Other statements must not write `v` between the test and the
        // increment; they come first.
        let writable = std::mem::take(&mut scope.writable);
        scope.writable = writable.iter().filter(|w| **w != v).cloned().collect();
        body.extend(self.stmts(scope, 1, depth + 1));
        scope.writable = writable;
        scope.in_loop = was_in_loop;
        body.push(Stmt::Line(format!("{v} = {v} + 0.5d0 + 0.25d0*sin({e})")));
        let mut out = vec![
            Stmt::Keep(format!("{it} = 0")),
            Stmt::Block {
                head: format!("do while ({v} < {c} .and. {it} < 4)"),
                body,
                else_body: None,
                tail: "end do".into(),
            },
        ];
        // The loop may push `v` past BOUND: bring it back.
        out.push(Stmt::Line(format!("{v} = 4d0*tanh(0.25d0*{v})")));
        if scope.may_trace {
            out.push(self.trace(&it));
        }
        scope.free_ints.push(it);
        out
    }

    /// A call of a generated subroutine.
    fn call(&mut self, scope: &mut Scope) -> Vec<Stmt> {
        let subs: Vec<Callee> = self
            .callees
            .iter()
            .filter(|c| !c.is_function && (!c.has_n || scope.has_n))
            .cloned()
            .collect();
        if subs.is_empty() {
            return vec![];
        }
        let callee = subs[self.rng.below(subs.len())].clone();
        let mut args = Vec::new();
        if callee.has_n {
            args.push("n".to_string());
        }
        // Actual arguments passed by reference must be distinct and must not
        // be module variables.
        let mut used: Vec<String> = Vec::new();
        for p in &callee.params {
            let arg = match p {
                // Parenthesised: an expression, never a variable passed by
                // reference (which could alias an inout argument or a
                // module variable the callee writes).
                Param::ScalarIn => format!("({})", self.expr(scope, 2).0),
                Param::ScalarOpt => match self.optional_actual(scope, 2, callee.params.len()) {
                    Some(a) => a,
                    None => continue,
                },
                Param::ArrayIn => {
                    let cands: Vec<String> = scope
                        .arrays
                        .iter()
                        .filter(|a| {
                            **a != self.global_array
                                && !self.module_arrays.contains(a)
                                && !used.contains(a)
                        })
                        .cloned()
                        .collect();
                    if cands.is_empty() {
                        return vec![];
                    }
                    let a = cands[self.rng.below(cands.len())].clone();
                    self.array_actual(scope, &a, &used)
                }
                Param::ScalarInOut | Param::ArrayInOut => {
                    let pool = if *p == Param::ScalarInOut {
                        &scope.writable
                    } else {
                        &scope.writable_arrays
                    };
                    let cands: Vec<String> = pool
                        .iter()
                        .filter(|a| {
                            !self.globals.contains(a)
                                && **a != self.global_array
                                && !self.module_arrays.contains(a)
                                && !used.contains(a)
                        })
                        .cloned()
                        .collect();
                    if cands.is_empty() {
                        return vec![];
                    }
                    let a = cands[self.rng.below(cands.len())].clone();
                    if *p == Param::ArrayInOut {
                        self.array_actual(scope, &a, &used)
                    } else {
                        a
                    }
                }
                Param::AllocInOut => match self.allocatable_actual(scope, &used) {
                    Some(a) => a,
                    None => return vec![],
                },
            };
            if matches!(
                p,
                Param::ArrayIn | Param::ScalarInOut | Param::ArrayInOut | Param::AllocInOut
            ) {
                used.push(sections::base(&arg).to_string());
            }
            args.push(arg);
        }
        // An intent(in) array must not also be passed as inout: checked by
        // `used`. An expression argument may read a variable passed inout;
        // that is fine (it is evaluated before the call).
        vec![Stmt::Line(format!(
            "call {}({})",
            callee.name,
            args.join(", ")
        ))]
    }

    /// Random dummies for a subprocedure.
    fn params(&mut self, function: bool) -> (bool, Vec<Param>) {
        let count = self.rng.range(1, 3) as usize;
        let mut ps = Vec::new();
        for _ in 0..count {
            let p = if function {
                if self.rng.chance(70) {
                    Param::ScalarIn
                } else {
                    Param::ArrayIn
                }
            } else {
                match self.rng.below(4) {
                    0 => Param::ScalarIn,
                    1 => Param::ScalarInOut,
                    2 => Param::ArrayIn,
                    _ => Param::ArrayInOut,
                }
            };
            ps.push(p);
        }
        // One scalar alone stays required: such functions are the ones
        // passed as dummy procedures (`via`), which have no explicit
        // interface to carry OPTIONAL.
        if self.opt.optional_args && ps.len() > 1 && ps.last() == Some(&Param::ScalarIn) {
            *ps.last_mut().expect("not empty") = Param::ScalarOpt;
        }
        if !function {
            // First: an OPTIONAL scalar stays last.
            self.maybe_allocatable_param(&mut ps);
        }
        let has_n = ps
            .iter()
            .any(|p| matches!(p, Param::ArrayIn | Param::ArrayInOut | Param::AllocInOut))
            || self.rng.chance(30);
        (has_n, ps)
    }

    /// Declarations and scope of a subprocedure's dummies and locals.
    fn proc_scope(
        &mut self,
        has_n: bool,
        params: &[Param],
        function: bool,
        names: &mut Vec<String>,
        head: &mut Vec<String>,
        init: &mut Vec<Stmt>,
    ) -> Scope {
        let mut scope = Scope {
            has_n,
            may_trace: !function,
            in_function: function,
            ..Scope::default()
        };
        if has_n {
            head.push("  integer, intent(in) :: n".into());
            scope.indices.push("1".into());
            scope.indices.push("n".into());
        }
        for (k, p) in params.iter().enumerate() {
            let k = k + 1;
            match p {
                Param::ScalarIn => {
                    let v = format!("u{k}");
                    head.push(format!("  double precision, intent(in) :: {v}"));
                    scope.reals.push(v.clone());
                    names.push(v);
                }
                Param::ScalarOpt => {
                    let (o, v) = (format!("o{k}"), format!("q{k}"));
                    head.push(format!("  double precision, intent(in), optional :: {o}"));
                    head.push(format!("  double precision :: {v}"));
                    init.push(Stmt::Block {
                        head: format!("if (present({o})) then"),
                        body: vec![Stmt::Line(format!("{v} = {o}"))],
                        else_body: Some(vec![Stmt::Line(format!("{v} = 0.5d0"))]),
                        tail: "end if".into(),
                    });
                    scope.reals.push(v);
                    names.push(o);
                }
                Param::ScalarInOut => {
                    let v = format!("v{k}");
                    head.push(format!("  double precision, intent(inout) :: {v}"));
                    scope.reals.push(v.clone());
                    scope.writable.push(v.clone());
                    scope.dummies_out.push(v.clone());
                    names.push(v);
                }
                Param::ArrayIn => {
                    let v = format!("a{k}");
                    let shape = self.dummy_shape(&mut scope, &v);
                    head.push(format!("  double precision, intent(in) :: {v}{shape}"));
                    scope.arrays.push(v.clone());
                    names.push(v);
                }
                Param::ArrayInOut => {
                    let v = format!("b{k}");
                    let shape = self.dummy_shape(&mut scope, &v);
                    head.push(format!("  double precision, intent(inout) :: {v}{shape}"));
                    scope.arrays.push(v.clone());
                    scope.writable_arrays.push(v.clone());
                    scope.dummies_out.push(v.clone());
                    names.push(v);
                }
                Param::AllocInOut => self.allocatable_dummy(k, &mut scope, head, names, init),
            }
        }
        // Locals: scalars, maybe an automatic array, loop variables; their
        // initial values read only the dummies.
        let mut dummies = scope.clone();
        let nlocals = self.rng.range(1, 2);
        for k in 1..=nlocals {
            let v = format!("t{k}");
            head.push(format!("  double precision :: {v}"));
            init.push(self.store(&v, &dummies, 2));
            scope.reals.push(v.clone());
            scope.writable.push(v.clone());
        }
        if has_n && self.rng.chance(50) {
            head.push("  double precision :: w(n)".into());
            dummies.indices.push("i9".into());
            let e = self.store("w(i9)", &dummies, 2);
            init.push(Stmt::Block {
                head: "do i9 = 1, n".into(),
                body: vec![e],
                else_body: None,
                tail: "end do".into(),
            });
            scope.arrays.push("w".into());
            scope.writable_arrays.push("w".into());
        }
        if self.opt.allocatable_locals {
            self.allocatable_local(&mut scope, &dummies, head, init);
        }
        self.section_matrix(&mut scope, &dummies, head, init);
        self.derived_locals(&mut scope, &dummies, head, init);
        self.intrinsic_locals(&mut scope, &dummies, head, init);
        head.push("  integer :: i1, i2, i9, k1, k2, k3".into());
        scope.free_loop_vars = vec!["i2".into(), "i1".into()];
        scope.free_ints = vec!["k3".into(), "k2".into(), "k1".into()];
        // Module variables: readable everywhere; writable in subroutines
        // when globals flow across calls.
        scope.reals.extend(self.globals.iter().cloned());
        scope.reals.extend(self.counters.iter().cloned());
        scope.arrays.push(self.global_array.clone());
        if self.opt.globals_across_calls && !function {
            scope.writable.extend(self.globals.iter().cloned());
            if has_n {
                scope.writable_arrays.push(self.global_array.clone());
            }
        }
        self.module_alloc_scope(&mut scope);
        self.module_matrix_scope(&mut scope);
        scope
    }

    /// A SAVE local that accumulates across calls (reset with `epoch`).
    fn save_local(&mut self, scope: &mut Scope, head: &mut Vec<String>) -> Vec<Stmt> {
        let init = lit(constant(&mut self.rng));
        head.push(format!("  double precision, save :: acc = {init}"));
        head.push("  integer, save :: seen = -1".into());
        scope.reals.push("acc".into());
        let (e, _) = self.expr(scope, 2);
        vec![
            Stmt::Block {
                head: "if (seen /= epoch) then".into(),
                body: vec![
                    Stmt::Line(format!("acc = {init}")),
                    Stmt::Line("seen = epoch".into()),
                ],
                else_body: None,
                tail: "end if".into(),
            },
            // Bounded: |acc| <= 0.5*4 + 2 = 4.
            Stmt::Line(format!("acc = 0.5d0*acc + 2d0*tanh({e})")),
        ]
    }

    /// Callee `k`: a subroutine `subK` or a DOUBLE PRECISION function
    /// `funK` (which stores its result last).
    fn callee(&mut self, k: usize, is_function: bool) -> ProcSrc {
        let name = format!("{}{k}", if is_function { "fun" } else { "sub" });
        let (has_n, params) = self.params(is_function);
        let mut names = Vec::new();
        let mut head = Vec::new();
        let mut init = Vec::new();
        let mut decl = Vec::new();
        let mut scope = self.proc_scope(
            has_n,
            &params,
            is_function,
            &mut names,
            &mut decl,
            &mut init,
        );
        let mut all = Vec::new();
        if has_n {
            all.push("n".to_string());
        }
        all.extend(names);
        let (kind, end) = if is_function {
            ("double precision function", "end function")
        } else {
            ("subroutine", "end subroutine")
        };
        head.push(format!("{kind} {name}({})", all.join(", ")));
        head.extend(decl);
        if !is_function {
            if self.opt.globals_across_calls && self.rng.chance(50) {
                let s = self.save_local(&mut scope, &mut head);
                init.extend(s);
            }
            for c in &self.counters {
                // Passive state a callee advances (bounded below 2).
                init.push(Stmt::Line(format!("{c} = 0.5d0*{c} + 0.25d0")));
            }
        }
        let count = self.rng.range(1, self.opt.max_stmts as i64) as usize;
        let body = self.stmts(&mut scope, count, 0);
        let mut finish = if is_function {
            vec![self.store(&name, &scope, 3)]
        } else {
            vec![]
        };
        finish.append(&mut self.release);
        self.callees.push(Callee {
            name: name.clone(),
            is_function,
            params,
            has_n,
        });
        ProcSrc {
            head,
            init,
            body,
            finish,
            end: format!("{end} {name}"),
        }
    }

    /// One directly recursive function `rec1(n, x)`, or two mutually
    /// recursive ones (`rec1` calls `rec2`, which calls `rec1`), each
    /// `r = a*next(n - 1, b*x + c) + d*f(x)` above depth 1 and `r = e*f(x) +
    /// d` at the bottom, with f one of sin, cos, tanh, exp(-x*x) and
    /// |a| <= 1/2, |b|, |d|, |e| <= 1, |c| <= 1/2: |r| < 3 at every depth.
    fn recursive_functions(&mut self) -> Vec<ProcSrc> {
        let mutual = self.rng.chance(40);
        let names: Vec<String> = if mutual {
            vec!["rec1".into(), "rec2".into()]
        } else {
            vec!["rec1".into()]
        };
        let mut out = Vec::new();
        for (k, name) in names.iter().enumerate() {
            let next = &names[(k + 1) % names.len()];
            let mut c = || {
                let v = self.rng.range(-64, 64) as f64 / 64.0;
                lit(v)
            };
            let (a, b, cc, d, e) = (c(), c(), c(), c(), c());
            let f = |rng: &mut Rng, x: &str| match rng.below(4) {
                0 => format!("sin({x})"),
                1 => format!("cos({x})"),
                2 => format!("tanh({x})"),
                _ => format!("exp(-({x})*({x}))"),
            };
            let (f1, f2) = (f(&mut self.rng, "x"), f(&mut self.rng, "x"));
            out.push(ProcSrc {
                head: vec![
                    format!("recursive function {name}(n, x) result(r)"),
                    "  integer, intent(in) :: n".into(),
                    "  double precision, intent(in) :: x".into(),
                    "  double precision :: r".into(),
                ],
                init: Vec::new(),
                body: Vec::new(),
                finish: vec![Stmt::Block {
                    head: "if (n <= 1) then".into(),
                    body: vec![Stmt::Line(format!("r = {e}*{f1} + {d}"))],
                    else_body: Some(vec![Stmt::Line(format!(
                        "r = 0.5d0*{a}*{next}(n - 1, {b}*x + 0.5d0*{cc}) + {d}*{f2}"
                    ))]),
                    tail: "end if".into(),
                }],
                end: format!("end function {name}"),
            });
        }
        self.callees.push(Callee {
            name: "rec1".into(),
            is_function: true,
            params: vec![Param::ScalarIn],
            has_n: true,
        });
        out
    }

    fn top(&mut self, resets: Vec<Stmt>) -> ProcSrc {
        let mut head: Vec<String> = [
            "subroutine top(n, mode, x, s, y, r, path)",
            "  integer, intent(in) :: n, mode",
            "  double precision, intent(in) :: x(n), s",
            "  double precision, intent(out) :: y(n), r",
            "  integer, intent(out) :: path",
            "  double precision :: t1, t2, w(n)",
            "  integer :: i1, i2, i9, k1, k2, k3",
            // Storage association: t3 is e4(2).
            "  double precision :: e4(4), t3",
            "  equivalence (e4(2), t3)",
        ]
        .map(String::from)
        .to_vec();
        let mut init = Vec::new();
        if self.opt.persistent_state {
            init.push(Stmt::Block {
                head: "if (mode == 1) then".into(),
                body: resets,
                else_body: None,
                tail: "end if".into(),
            });
        } else {
            init.extend(resets);
        }
        for c in &self.counters {
            // Bounded: 0, 1, 1.5, 1.75, ... < 2.
            init.push(Stmt::Line(format!("{c} = 0.5d0*{c} + 1d0")));
        }
        init.push(Stmt::Line("trace = 0".into()));
        self.module_alloc_top(&mut init);
        self.module_matrix_top(&mut init);
        let inputs = Scope {
            has_n: true,
            reals: vec!["s".into()],
            arrays: vec!["x".into()],
            indices: vec!["1".into(), "n".into()],
            ..Scope::default()
        };
        init.push(self.store("t1", &inputs, 2));
        init.push(self.store("t2", &inputs, 2));
        init.push(self.store("r", &inputs, 1));
        // Storage association without drawing from the generator (the
        // programs of every seed keep their statements): a store through
        // t3 changes e4(2), which the outputs read.
        init.push(Stmt::Line("e4 = 0.5d0*s".into()));
        init.push(Stmt::Line("t3 = t3*x(1)".into()));
        let mut inputs = inputs;
        inputs.indices.push("i9".into());
        let w = self.store("w(i9)", &inputs, 2);
        let y = self.store("y(i9)", &inputs, 1);
        init.push(Stmt::Block {
            head: "do i9 = 1, n".into(),
            body: vec![w, y],
            else_body: None,
            tail: "end do".into(),
        });
        let mut scope = Scope {
            has_n: true,
            may_trace: true,
            reals: vec!["s".into(), "t1".into(), "t2".into()],
            writable: vec!["t1".into(), "t2".into(), "r".into()],
            arrays: vec!["x".into(), "w".into()],
            writable_arrays: vec!["w".into(), "y".into()],
            indices: vec!["1".into(), "n".into()],
            free_loop_vars: vec!["i2".into(), "i1".into()],
            free_ints: vec!["k3".into(), "k2".into(), "k1".into()],
            ..Scope::default()
        };
        scope.reals.push("r".into());
        scope.arrays.push("y".into());
        scope.reals.extend(self.globals.iter().cloned());
        scope.reals.extend(self.counters.iter().cloned());
        scope.arrays.push(self.global_array.clone());
        // Module variables become active (written from active values) only
        // when globals may flow across calls; otherwise they keep the
        // constants of the reset.
        if self.opt.globals_across_calls {
            scope.writable.extend(self.globals.iter().cloned());
            scope.writable_arrays.push(self.global_array.clone());
        }
        self.module_alloc_scope(&mut scope);
        self.module_matrix_scope(&mut scope);
        if self.opt.allocatable_locals {
            self.allocatable_local(&mut scope, &inputs, &mut head, &mut init);
        }
        self.section_matrix(&mut scope, &inputs, &mut head, &mut init);
        self.derived_locals(&mut scope, &inputs, &mut head, &mut init);
        self.intrinsic_locals(&mut scope, &inputs, &mut head, &mut init);
        let count = self.rng.range(2, self.opt.max_stmts as i64 + 2) as usize;
        let body = self.stmts(&mut scope, count, 0);
        // Outputs depend on everything that is left.
        let mut finish = Vec::new();
        scope.indices.push("i9".into());
        let (e, _) = self.expr(&scope, 2);
        scope.indices.pop();
        finish.push(Stmt::Block {
            head: "do i9 = 1, n".into(),
            body: vec![Stmt::Line(format!(
                "y(i9) = y(i9) + 0.5d0*w(i9) + 0.25d0*tanh({e}){}",
                self.counters
                    .iter()
                    .map(|c| format!(" + 0.125d0*{c}*x(i9)**2"))
                    .collect::<String>()
            ))],
            else_body: None,
            tail: "end do".into(),
        });
        let g: Vec<String> = self
            .globals
            .iter()
            .map(|g| format!(" + {g}"))
            .chain(self.counters.iter().map(|c| format!(" + {c}*x(n)**2")))
            .collect();
        finish.push(Stmt::Line(format!(
            "r = r + t1*t2{} + ga(1)*ga(n) + e4(1) + e4(2)*t3",
            g.join("")
        )));
        finish.push(Stmt::Line("path = trace".into()));
        finish.append(&mut self.release);
        ProcSrc {
            head,
            init,
            body,
            finish,
            end: "end subroutine top".into(),
        }
    }
}

/// A point to evaluate a program at: `n`, `x(1..n)`, `s`.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The array extent, 1 to 4.
    pub n: usize,
    /// The array input.
    pub x: Vec<f64>,
    /// The scalar input.
    pub s: f64,
}

impl Point {
    /// A random point: values in [-2, 2] on a grid of 1/64 now and then
    /// (zeros and ties between inputs included), else arbitrary doubles.
    pub fn random(rng: &mut Rng) -> Point {
        let n = rng.range(1, 4) as usize;
        let value = |rng: &mut Rng| -> f64 {
            if rng.chance(20) {
                rng.range(-128, 128) as f64 / 64.0
            } else {
                (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
            }
        };
        let mut x: Vec<f64> = (0..n).map(|_| value(rng)).collect();
        if n > 1 && rng.chance(10) {
            x[1] = x[0];
        }
        let s = value(rng);
        Point { n, x, s }
    }

    /// The active inputs in the order of `--wrt x,s`.
    pub fn inputs(&self) -> Vec<f64> {
        let mut v = self.x.clone();
        v.push(self.s);
        v
    }

    /// The point with its active inputs replaced.
    pub fn with_inputs(&self, v: &[f64]) -> Point {
        Point {
            n: self.n,
            x: v[..self.n].to_vec(),
            s: v[self.n],
        }
    }
}

/// Picks a string from a non-empty slice.
trait PickStr {
    fn pick_str(&mut self, items: &[String]) -> String;
}

impl PickStr for Rng {
    fn pick_str(&mut self, items: &[String]) -> String {
        items[self.below(items.len())].clone()
    }
}
