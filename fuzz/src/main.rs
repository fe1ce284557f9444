//! `adjit-fuzz`: an in-process mutation fuzzer of adjit on stable Rust.
//!
//! It owns the campaign loop: seeds (the test corpus, the small programs
//! of `fuzz/seeds/`, plus the inputs a previous campaign kept), mutations
//! guided by a Fortran token dictionary (`fuzz/dict/fortran.dict`) and by
//! structure (line splices, intrinsic and operator swaps), and the three
//! targets:
//!
//! * `front`: the front end (parse, semantic analysis, lowering to IR)
//!   and the IR verifier on its output;
//! * `jit`: the front end, native compilation and a call of one procedure
//!   with small integer and real arguments;
//! * `adjoint`: `jit` (on a procedure with a real argument when there is
//!   one) plus that procedure's tangent and adjoint Jacobians of its last
//!   real argument with respect to all of them.
//!
//! Calls run under the engine's limits (time, memory, native stack), so a
//! program that loops or recurses forever is an error, not a hang. Findings
//! go to `fuzz/out/TARGET/`: `crash-*.f90` (a panic, with its message in a
//! `.txt`), `last-signal.f90` (the input running when the process died on a
//! signal: written by a signal handler), `hang-*.f90` (an input still
//! running after [`HANG`]), `internal-*.f90` (an internal error: lowered or
//! generated code that does not verify or compile; a documented refusal of
//! the transforms is not one). Inputs with a new coverage feature (an
//! outcome class, or a kind of IR instruction the front end lowered to)
//! join the pool and are kept in `fuzz/corpus/TARGET/` as seeds of later
//! campaigns. Parents are drawn favouring programs the front end accepts,
//! then cheap ones. `ADJIT_FUZZ_DIR` moves `out/` and `corpus/`.
//! `fuzz/run.sh` restarts the process after a fatal signal and adds up the
//! executions; the time per stage is printed at the end.
//!
//! `adjit-fuzz replay TARGET FILE...` runs saved inputs once each (to
//! reproduce a finding) and prints their outcomes and the time per stage.
//!
//! Native code is compiled with Cranelift's quickest settings
//! ([`CompileSpeed::Fast`]: no optimization, single-pass register
//! allocation), which cut the time of an execution of the native targets
//! most; `--compile optimized` (also after `replay TARGET`) fuzzes the
//! engine's default settings instead.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{ArgValue, Engine, Error, ErrorKind, Options, Selection};
use adjit::ir::io::Channels;
use adjit::ir::Type;
use adjit::jit::codegen::CompileSpeed;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An input still running after this long is a hang.
const HANG: Duration = Duration::from_secs(20);
/// Time limit of every native call (a loop that runs longer is an error
/// outcome like any other; a long limit only slows the campaign).
const CALL_TIMEOUT: Duration = Duration::from_millis(20);
/// Memory limit of arguments and local arrays.
const MEMORY_LIMIT: usize = 256 << 20;
/// Largest input kept (bytes) by the front-end target.
const MAX_INPUT: usize = 16 << 10;
/// Largest input kept by the `jit` and `adjoint` targets: every execution
/// compiles the whole program three times, so small programs go further.
const MAX_NATIVE_INPUT: usize = 2 << 10;
/// Largest real argument (elements) the `adjoint` target differentiates
/// with respect to, or whose derivative it computes.
const MAX_DERIVATIVE_ELEMENTS: usize = 1024;
/// Largest pool of inputs mutated from.
const MAX_POOL: usize = 20_000;

/// The input being executed, for the signal handler and the watchdog.
static CURRENT_PTR: AtomicUsize = AtomicUsize::new(0);
static CURRENT_LEN: AtomicUsize = AtomicUsize::new(0);
/// File the signal handler writes the current input to.
static SIGNAL_FD: AtomicI32 = AtomicI32::new(-1);
/// Milliseconds since [`epoch`] when the current execution started (0:
/// idle).
static EXEC_START: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static E: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *E.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64 + 1
}

/// Stages of an execution, timed for `--profile`.
const STAGES: [&str; 7] = [
    "front end",
    "native compile",
    "call",
    "tangent build",
    "tangent Jacobian",
    "adjoint build",
    "adjoint Jacobian",
];
/// Nanoseconds spent in each of [`STAGES`].
static STAGE_NS: [AtomicU64; 7] = [const { AtomicU64::new(0) }; 7];

/// Runs `f`, adding its duration to stage `k` of [`STAGES`].
fn timed<T>(k: usize, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let r = f();
    STAGE_NS[k].fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    r
}

/// Prints the time per stage (`--profile`).
fn print_profile(execs: u64) {
    let total: u64 = STAGE_NS.iter().map(|a| a.load(Ordering::Relaxed)).sum();
    eprintln!("time per stage over {execs} executions:");
    for (name, ns) in STAGES.iter().zip(&STAGE_NS) {
        let ns = ns.load(Ordering::Relaxed);
        eprintln!(
            "  {name:<17} {:>9.3} s {:>5.1}% {:>8.3} ms/exec",
            ns as f64 * 1e-9,
            100.0 * ns as f64 / total.max(1) as f64,
            ns as f64 * 1e-6 / execs.max(1) as f64
        );
    }
}

/// Which part of adjit an execution exercises.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Front,
    Jit,
    Adjoint,
}

impl Target {
    fn parse(s: &str) -> Option<Target> {
        match s {
            "front" => Some(Target::Front),
            "jit" => Some(Target::Jit),
            "adjoint" => Some(Target::Adjoint),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Target::Front => "front",
            Target::Jit => "jit",
            Target::Adjoint => "adjoint",
        }
    }
}

/// xorshift64* (the campaign needs speed and reproducibility, not quality).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// One input: source text and whether it is fixed form.
#[derive(Clone)]
struct Input {
    text: Vec<u8>,
    fixed: bool,
}

/// Reads an AFL-style dictionary (`"token"` a line, `#` comments).
fn dictionary(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let inner = l.strip_prefix('"')?.strip_suffix('"')?;
            Some(
                inner
                    .replace("\\\"", "\"")
                    .replace("\\\\", "\\")
                    .into_bytes(),
            )
        })
        .collect()
}

/// Fortran sources in `dir` (not recursive) of at most `max` bytes.
fn sources_in(dir: &Path, max: usize) -> Vec<Input> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        let fixed = matches!(ext, "f" | "for" | "f77");
        if !(fixed || ext == "f90") {
            continue;
        }
        if let Ok(text) = std::fs::read(&p) {
            if text.len() <= max {
                out.push(Input { text, fixed });
            }
        }
    }
    out
}

/// Byte ranges of the lines of `text`.
fn lines(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        if b == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// Interesting integers for replacing number literals.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "7",
    "100",
    "1000",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967296",
    "10000000000",
    "9223372036854775807",
    "-9223372036854775808",
    "1.0d300",
    "0.0",
    "-0.5",
];

/// Applies 1 or 2 random mutations to `input`.
fn mutate(input: &Input, pool: &[Input], dict: &[Vec<u8>], max: usize, rng: &mut Rng) -> Input {
    let mut t = input.text.clone();
    for _ in 0..1 + rng.below(2) {
        let ls = lines(&t);
        match rng.below(13) {
            // Insert a token (with a blank either side).
            0 | 1 => {
                let tok = &dict[rng.below(dict.len())];
                let at = rng.below(t.len() + 1);
                let mut piece = vec![b' '];
                piece.extend_from_slice(tok);
                piece.push(b' ');
                t.splice(at..at, piece);
            }
            // Delete a short range.
            2 => {
                if !t.is_empty() {
                    let a = rng.below(t.len());
                    let b = (a + 1 + rng.below(16)).min(t.len());
                    t.drain(a..b);
                }
            }
            // Duplicate, delete or swap lines.
            3 if !ls.is_empty() => {
                let (a, b) = ls[rng.below(ls.len())];
                let line = t[a..b].to_vec();
                let (c, _) = ls[rng.below(ls.len())];
                t.splice(c..c, line);
            }
            4 if !ls.is_empty() => {
                let (a, b) = ls[rng.below(ls.len())];
                t.drain(a..b);
            }
            5 if ls.len() > 1 => {
                let i = rng.below(ls.len());
                let j = rng.below(ls.len());
                let (i, j) = (i.min(j), i.max(j));
                if i != j {
                    let (a, b) = ls[i];
                    let (c, d) = ls[j];
                    let mut out = t[..a].to_vec();
                    out.extend_from_slice(&t[c..d]);
                    out.extend_from_slice(&t[b..c]);
                    out.extend_from_slice(&t[a..b]);
                    out.extend_from_slice(&t[d..]);
                    t = out;
                }
            }
            // Replace a number literal.
            6 => {
                let starts: Vec<usize> = (0..t.len())
                    .filter(|&i| {
                        t[i].is_ascii_digit()
                            && (i == 0 || !(t[i - 1].is_ascii_alphanumeric() || t[i - 1] == b'_'))
                    })
                    .collect();
                if !starts.is_empty() {
                    let a = starts[rng.below(starts.len())];
                    let mut b = a;
                    while b < t.len() && (t[b].is_ascii_digit() || t[b] == b'.') {
                        b += 1;
                    }
                    let n = NUMBERS[rng.below(NUMBERS.len())].as_bytes().to_vec();
                    t.splice(a..b, n);
                }
            }
            // Splice lines of another input.
            7 if !pool.is_empty() => {
                let other = &pool[rng.below(pool.len())].text;
                let ols = lines(other);
                if !ols.is_empty() {
                    let i = rng.below(ols.len());
                    let j = (i + 1 + rng.below(6)).min(ols.len());
                    let piece = other[ols[i].0..ols[j - 1].1].to_vec();
                    let at = ls.get(rng.below(ls.len() + 1)).map_or(t.len(), |l| l.0);
                    t.splice(at..at, piece);
                }
            }
            // Replace a word with another word of the input.
            8 => {
                let words: Vec<(usize, usize)> = word_spans(&t);
                if words.len() > 1 {
                    let (a, b) = words[rng.below(words.len())];
                    let (c, d) = words[rng.below(words.len())];
                    let w = t[c..d].to_vec();
                    t.splice(a..b, w);
                }
            }
            // Structure-aware: swap an intrinsic for another of the same
            // arity, or an arithmetic or relational operator for another
            // (the program usually stays valid, so the mutation reaches
            // the later stages).
            10 => swap_word(&mut t, INTRINSICS, rng),
            11 => swap_word(&mut t, OPERATORS, rng),
            // Overwrite a byte with a printable one.
            _ => {
                if !t.is_empty() {
                    let i = rng.below(t.len());
                    const BYTES: &[u8] = b" ()=,:*+-/.&!'\"%;\n0123abcnxyz";
                    t[i] = BYTES[rng.below(BYTES.len())];
                }
            }
        }
    }
    t.truncate(max);
    Input {
        text: t,
        fixed: input.fixed,
    }
}

/// Groups of interchangeable intrinsics (same arity, real arguments) and
/// operators, for [`swap_word`].
const INTRINSICS: &[&[&str]] = &[
    &[
        "sin", "cos", "tan", "exp", "log", "sqrt", "abs", "tanh", "sinh", "cosh", "atan", "asin",
        "acos", "log10", "erf", "gamma", "aint", "anint",
    ],
    &["max", "min", "mod", "sign", "atan2", "dim", "modulo"],
    &["sum", "product", "maxval", "minval"],
];
const OPERATORS: &[&[&str]] = &[
    &["+", "-", "*", "/", "**"],
    &[
        "<", ">", "<=", ">=", "==", "/=", ".lt.", ".gt.", ".le.", ".ge.", ".eq.", ".ne.",
    ],
    &[".and.", ".or.", ".eqv.", ".neqv."],
];

/// Replaces one occurrence in `t` of a word of `groups` (a whole
/// identifier, or an operator) with another word of its group.
fn swap_word(t: &mut Vec<u8>, groups: &[&[&str]], rng: &mut Rng) {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut hits = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for w in group.iter().map(|w| w.as_bytes()) {
            for at in 0..t.len().saturating_sub(w.len() - 1) {
                let end = at + w.len();
                if !t[at..end].eq_ignore_ascii_case(w) {
                    continue;
                }
                let whole = if ident(w[0]) {
                    (at == 0 || !ident(t[at - 1])) && (end == t.len() || !ident(t[end]))
                } else {
                    // Not part of a longer operator (`**`, `<=`, `/=`, `//`).
                    let op = |b: u8| b"*/<>=".contains(&b);
                    (at == 0 || !op(t[at - 1])) && (end == t.len() || !op(t[end]))
                };
                if whole {
                    hits.push((at, end, g));
                }
            }
        }
    }
    if hits.is_empty() {
        return;
    }
    let (a, b, g) = hits[rng.below(hits.len())];
    let group = groups[g];
    let w = group[rng.below(group.len())].as_bytes().to_vec();
    t.splice(a..b, w);
}

/// Byte ranges of identifiers and numbers.
fn word_spans(t: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i].is_ascii_alphanumeric() || t[i] == b'_' {
            let a = i;
            while i < t.len() && (t[i].is_ascii_alphanumeric() || t[i] == b'_') {
                i += 1;
            }
            out.push((a, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Cranelift's setting for the inputs' code: `--compile fast` (the
/// default: each input's code runs once, and Cranelift's optimizations
/// were most of an execution's time) or `--compile optimized` (the
/// engine's default, the code users run).
static OPTIMIZED: AtomicBool = AtomicBool::new(false);

/// Options of every engine the fuzzer builds: no terminal I/O, tight
/// limits, the compile speed of [`OPTIMIZED`].
fn options() -> Options {
    Options {
        compile_speed: if OPTIMIZED.load(Ordering::Relaxed) {
            CompileSpeed::Optimized
        } else {
            CompileSpeed::Fast
        },
        io: Channels {
            output: Arc::new(Mutex::new(std::io::sink())),
            input: Arc::new(Mutex::new(std::io::empty())),
        },
        timeout: Some(CALL_TIMEOUT),
        memory_limit: MEMORY_LIMIT,
        tape_ram_budget: 64 << 20,
        ..Options::default()
    }
}

/// The outcome class of an error: kind and message without digits, first
/// line past the location.
fn class(e: &Error) -> String {
    let line = e
        .message
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or_else(|| e.message.lines().next().unwrap_or(""));
    let tail = line.rsplit("error:").next().unwrap_or(line);
    // Names and numbers vary without making a new outcome.
    let mut words = String::new();
    let mut quoted = false;
    for c in tail.chars() {
        if c == '`' || c == '\'' || c == '"' {
            quoted = !quoted;
        } else if !quoted && !c.is_ascii_digit() {
            words.push(c);
        }
        if words.len() >= 60 {
            break;
        }
    }
    format!("{:?}:{words}", e.kind)
}

/// What one execution reached.
struct Outcome {
    /// Stage and message classes.
    signature: String,
    /// Coverage features (hashed): the classes of the signature, and for a
    /// program the front end accepts, each kind of IR instruction (with
    /// its operator and type) it lowered to. An input with a feature no
    /// earlier input had joins the pool.
    features: Vec<u64>,
    /// An internal error (a bug short of a crash).
    internal: Option<String>,
    /// Stages reached: compiled by the front end, called natively, ran a
    /// derivative.
    reached: [bool; 3],
}

/// Runs one input against a target and adds the classes of its
/// signature to its features.
fn execute(target: Target, input: &Input) -> Outcome {
    let mut out = execute_stages(target, input);
    let stages = out.signature.split('|').filter(|c| !c.is_empty());
    let classes: Vec<u64> = stages.map(|c| hash(c.as_bytes())).collect();
    out.features.extend(classes);
    out
}

/// Hashed kinds of the instructions of `module`: the instruction's name
/// and first field up to a number (`Binary(Add`, `Intrinsic(Sin`, not
/// `Load(VarId(3`), with the type it defines.
fn instruction_kinds(module: &adjit::ir::Module) -> Vec<u64> {
    let mut kinds: HashSet<u64> = HashSet::new();
    let mut text = String::new();
    for proc in &module.procs {
        for inst in &proc.insts {
            use std::fmt::Write as _;
            text.clear();
            let _ = write!(text, "{:?}", inst.kind);
            let end = text
                .find(|c: char| c.is_ascii_digit() || c == ',' || c == ')' || c == ' ')
                .unwrap_or(text.len());
            text.truncate(end);
            let _ = write!(text, ":{:?}", inst.ty);
            kinds.insert(hash(text.as_bytes()));
        }
    }
    kinds.into_iter().collect()
}

/// The stages of [`execute`].
fn execute_stages(target: Target, input: &Input) -> Outcome {
    let text = String::from_utf8_lossy(&input.text).into_owned();
    let name = if input.fixed { "fuzz.f" } else { "fuzz.f90" };
    let mut out = Outcome {
        signature: String::new(),
        features: Vec::new(),
        internal: None,
        reached: [false; 3],
    };
    let note = |out: &mut Outcome, e: &Error| {
        // A documented refusal of the transforms ("cannot differentiate
        // ...") is an outcome; IR that does not verify or native code that
        // does not compile is a bug.
        let refusal = e.message.contains("cannot differentiate");
        if e.kind == ErrorKind::Internal && !refusal && out.internal.is_none() {
            out.internal = Some(e.message.clone());
        }
        out.signature.push_str(&class(e));
        out.signature.push('|');
    };
    let engine = match timed(0, || {
        Engine::from_sources(&[(name.into(), text)], options())
    }) {
        Ok(e) => e,
        Err(e) => {
            note(&mut out, &e);
            return out;
        }
    };
    out.reached[0] = true;
    // Lowered code that does not verify is a front-end bug, whichever
    // stage would trip on it: caught here, at the front end's speed.
    if let Err(errors) = timed(0, || adjit::ir::verify::verify_module(engine.module())) {
        let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
        out.internal = Some(format!("the front end's IR does not verify: {first}"));
        out.signature = format!(
            "unverified:{}|",
            first
                .chars()
                .filter(|c| c.is_ascii_alphabetic() || *c == ' ')
                .take(40)
                .collect::<String>()
        );
        return out;
    }
    let names = engine.procedure_names();
    out.signature = format!("ok{}|", names.len().min(4));
    out.features = instruction_kinds(engine.module());
    if target == Target::Front {
        return out;
    }
    // One procedure per input (each `procedure`, `tangent` and `adjoint`
    // compiles the whole module): for `adjoint`, one with a real argument
    // when there is one. The choice depends on the input only, so a replay
    // repeats it.
    let mut rng = Rng(hash(&input.text) | 1);
    let module = engine.module();
    let has_real = |n: &String| {
        module.find_proc(n).is_some_and(|id| {
            let p = module.proc(id);
            p.params
                .iter()
                .chain(&p.result)
                .any(|v| p.vars[v.index()].ty.is_float())
        })
    };
    let candidates: Vec<&String> = match target {
        Target::Adjoint if names.iter().any(has_real) => {
            names.iter().filter(|n| has_real(n)).collect()
        }
        _ => names.iter().collect(),
    };
    let Some(&name) = candidates.get(rng.below(candidates.len())) else {
        return out;
    };
    let proc = match timed(1, || engine.procedure(Some(name))) {
        Ok(p) => p,
        Err(e) => {
            note(&mut out, &e);
            return out;
        }
    };
    let mut args = proc.args();
    let settings = settings(&args, &mut rng);
    if let Err(e) = apply(&mut args, &settings) {
        note(&mut out, &e);
        return out;
    }
    out.reached[1] = true;
    match timed(2, || proc.call(&mut args)) {
        Ok(()) => out.signature.push_str("call|"),
        Err(e) => note(&mut out, &e),
    }
    if target != Target::Adjoint {
        return out;
    }
    // Real arguments of at most MAX_DERIVATIVE_ELEMENTS elements: a
    // Jacobian costs a tangent sweep per input element and an adjoint
    // sweep per output element (a 7.5-million-element argument made an
    // execution of hours, reported as a hang).
    let reals: Vec<String> = (0..args.names().len())
        .filter(|&i| args.ty(i).is_float())
        .map(|i| args.names()[i].clone())
        .filter(|n| {
            args.get(n)
                .is_ok_and(|b| b.len() <= MAX_DERIVATIVE_ELEMENTS)
        })
        .collect();
    let Some(last) = reals.last() else {
        return out;
    };
    let sel = |n: &str| Selection::parse(n);
    let (Ok(of), Ok(wrt)) = (
        sel(last),
        reals.iter().map(|n| sel(n)).collect::<Result<Vec<_>, _>>(),
    ) else {
        return out;
    };
    let of = vec![of];
    match timed(3, || engine.tangent(Some(name), &of, &wrt, 1)) {
        Ok(t) => {
            let mut a = t.args();
            let _ = apply(&mut a, &settings);
            match timed(4, || t.jacobian(&a)) {
                Ok(_) => out.signature.push_str("tangent|"),
                Err(e) => note(&mut out, &e),
            }
            out.reached[2] = true;
        }
        Err(e) => note(&mut out, &e),
    }
    match timed(5, || {
        engine.adjoint(Some(name), &of, &wrt, &AdjointOptions::default())
    }) {
        Ok(adj) => {
            let mut a = adj.args();
            let _ = apply(&mut a, &settings);
            match timed(6, || adj.jacobian(&a)) {
                Ok(_) => out.signature.push_str("adjoint|"),
                Err(e) => note(&mut out, &e),
            }
            out.reached[2] = true;
        }
        Err(e) => note(&mut out, &e),
    }
    out
}

/// Argument settings: small integers for integer scalars (sizes), a real
/// value for every real argument.
fn settings(args: &adjit::engine::Args, rng: &mut Rng) -> Vec<(String, ArgValue)> {
    let mut ints = Vec::new();
    let mut reals = Vec::new();
    for (i, name) in args.names().iter().enumerate() {
        let ty = args.ty(i);
        if ty.is_int() && !args.is_array(i) {
            ints.push((name.clone(), ArgValue::Integer(rng.below(7) as i64 - 1)));
        } else if ty.is_float() {
            let x = (rng.below(2001) as f64 - 1000.0) / 250.0;
            reals.push((name.clone(), ArgValue::Scalar(x)));
        } else if ty == Type::Bool && !args.is_array(i) {
            reals.push((name.clone(), ArgValue::Logical(rng.below(2) == 1)));
        }
    }
    ints.extend(reals);
    ints
}

fn apply(args: &mut adjit::engine::Args, settings: &[(String, ArgValue)]) -> Result<(), Error> {
    for (name, value) in settings {
        args.set(name, value.clone())?;
    }
    Ok(())
}

/// FNV-1a of the input (file names of findings).
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

fn save(dir: &Path, prefix: &str, input: &Input, note: Option<&str>) -> PathBuf {
    let ext = if input.fixed { "f" } else { "f90" };
    let path = dir.join(format!("{prefix}-{:016x}.{ext}", hash(&input.text)));
    let _ = std::fs::write(&path, &input.text);
    if let Some(note) = note {
        let _ = std::fs::write(path.with_extension("txt"), note);
    }
    path
}

/// Writes the current input to the signal file and dies of the signal.
extern "C" fn on_fatal_signal(sig: libc::c_int) {
    let fd = SIGNAL_FD.load(Ordering::SeqCst);
    let ptr = CURRENT_PTR.load(Ordering::SeqCst) as *const libc::c_void;
    let len = CURRENT_LEN.load(Ordering::SeqCst);
    // SAFETY: only async-signal-safe calls; `ptr` points to `len` bytes of
    // the input kept alive by the main loop while it runs.
    unsafe {
        if fd >= 0 && !ptr.is_null() {
            libc::ftruncate(fd, 0);
            libc::pwrite(fd, ptr, len, 0);
            libc::fsync(fd);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Installs [`on_fatal_signal`] for the signals of a crash (on the
/// alternate stack Rust sets up, so a stack overflow is caught too).
fn install_signal_handlers(file: &Path) {
    use std::os::unix::io::IntoRawFd;
    if let Ok(f) = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(file)
    {
        SIGNAL_FD.store(f.into_raw_fd(), Ordering::SeqCst);
    }
    for sig in [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
    ] {
        // SAFETY: a zeroed sigaction with a valid handler and flags.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as *const () as usize;
            action.sa_flags = libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// Saves an input that runs longer than [`HANG`] and exits (status 3).
fn start_watchdog(dir: PathBuf) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        let start = EXEC_START.load(Ordering::SeqCst);
        if start != 0 && now_ms().saturating_sub(start) > HANG.as_millis() as u64 {
            let ptr = CURRENT_PTR.load(Ordering::SeqCst) as *const u8;
            let len = CURRENT_LEN.load(Ordering::SeqCst);
            if !ptr.is_null() {
                // SAFETY: the main loop keeps the input alive while it runs
                // (and it is stuck in it).
                let text = unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec();
                let path = dir.join(format!("hang-{:016x}.f90", hash(&text)));
                let _ = std::fs::write(&path, &text);
                eprintln!("hang: {}", path.display());
            }
            std::process::exit(3);
        }
    });
}

/// Campaign counters.
#[derive(Default)]
struct Stats {
    execs: u64,
    reached: [u64; 3],
    crashes: u64,
    internal: u64,
}

/// Adds `delta` executions to the persistent total of `dir` (kept across
/// the restarts of `run.sh`).
fn add_total(dir: &Path, delta: &Stats) {
    let path = dir.join("totals");
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let mut v: Vec<u64> = old
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    v.resize(6, 0);
    let add = [
        delta.execs,
        delta.reached[0],
        delta.reached[1],
        delta.reached[2],
        delta.crashes,
        delta.internal,
    ];
    for (a, b) in v.iter_mut().zip(add) {
        *a += b;
    }
    let line: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    let _ = std::fs::write(&path, line.join(" ") + "\n");
}

/// Runs one input with crash protection; records what it found.
fn run_one(target: Target, input: &Input, dir: &Path, stats: &mut Stats) -> Option<Outcome> {
    CURRENT_PTR.store(input.text.as_ptr() as usize, Ordering::SeqCst);
    CURRENT_LEN.store(input.text.len(), Ordering::SeqCst);
    EXEC_START.store(now_ms(), Ordering::SeqCst);
    let result = std::panic::catch_unwind(|| execute(target, input));
    EXEC_START.store(0, Ordering::SeqCst);
    stats.execs += 1;
    match result {
        Ok(outcome) => {
            for (k, r) in outcome.reached.iter().enumerate() {
                stats.reached[k] += *r as u64;
            }
            if let Some(m) = &outcome.internal {
                stats.internal += 1;
                save(dir, "internal", input, Some(m));
            }
            Some(outcome)
        }
        Err(panic) => {
            stats.crashes += 1;
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            let path = save(dir, "crash", input, Some(&msg));
            eprintln!("crash: {} ({msg})", path.display());
            None
        }
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: adjit-fuzz front|jit|adjoint [--seconds S] [--execs N] [--seed K] [--compile fast|optimized]\n       adjit-fuzz replay front|jit|adjoint [--compile fast|optimized] FILE..."
    );
    std::process::exit(2)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let repo = root.parent().map(Path::to_path_buf).unwrap_or(root.clone());
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("replay") {
        let target = args
            .get(1)
            .and_then(|t| Target::parse(t))
            .unwrap_or_else(|| usage());
        let mut files = &args[2..];
        if files.first().map(String::as_str) == Some("--compile") {
            let optimized = match files.get(1).map(String::as_str) {
                Some("fast") => false,
                Some("optimized") => true,
                _ => usage(),
            };
            OPTIMIZED.store(optimized, Ordering::Relaxed);
            files = &files[2..];
        }
        for file in files {
            let text = std::fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
            let fixed = !file.ends_with(".f90");
            let o = execute(target, &Input { text, fixed });
            println!("{file}: {}", o.signature);
            if let Some(m) = o.internal {
                println!("  internal: {m}");
            }
        }
        print_profile(files.len() as u64);
        return;
    }
    let target = args
        .first()
        .and_then(|t| Target::parse(t))
        .unwrap_or_else(|| usage());
    let mut seconds = 60.0f64;
    let mut max_execs = u64::MAX;
    let mut seed = std::process::id() as u64 ^ now_ms().wrapping_mul(0x9E37_79B9);
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        let v = it.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--seconds" => seconds = v.parse().unwrap_or_else(|_| usage()),
            "--execs" => max_execs = v.parse().unwrap_or_else(|_| usage()),
            "--seed" => seed = v.parse().unwrap_or_else(|_| usage()),
            "--compile" => match v.as_str() {
                "fast" => OPTIMIZED.store(false, Ordering::Relaxed),
                "optimized" => OPTIMIZED.store(true, Ordering::Relaxed),
                _ => usage(),
            },
            _ => usage(),
        }
    }
    // `ADJIT_FUZZ_DIR`: where `out/` and `corpus/` go (default `fuzz/`),
    // so that a second campaign of one target does not mix its files and
    // totals with a running one's.
    let work = std::env::var_os("ADJIT_FUZZ_DIR").map_or(root.clone(), PathBuf::from);
    let out_dir = work.join("out").join(target.name());
    let keep_dir = work.join("corpus").join(target.name());
    for d in [&out_dir, &keep_dir] {
        std::fs::create_dir_all(d).expect("output directories");
    }
    install_signal_handlers(&out_dir.join("last-signal.f90"));
    start_watchdog(out_dir.clone());
    // Panics are findings, reported once by run_one.
    std::panic::set_hook(Box::new(|info| {
        if EXEC_START.load(Ordering::SeqCst) == 0 {
            eprintln!("adjit-fuzz: {info}");
        }
    }));

    let dict = dictionary(&root.join("dict").join("fortran.dict"));
    let max = match target {
        Target::Front => MAX_INPUT,
        Target::Jit | Target::Adjoint => MAX_NATIVE_INPUT,
    };
    let mut pool = sources_in(&repo.join("tests").join("corpus"), max);
    pool.extend(sources_in(&root.join("seeds"), max));
    pool.extend(sources_in(&keep_dir, max));
    if pool.is_empty() || dict.is_empty() {
        eprintln!("no seeds or no dictionary under {}", repo.display());
        std::process::exit(2);
    }
    let mut rng = Rng(seed | 1);
    let mut seen: HashSet<String> = HashSet::new();
    let mut stats = Stats::default();
    let mut flushed = Stats::default();
    let mut classes: HashMap<String, u64> = HashMap::new();
    // Microseconds each pool input took: cheap inputs are mutated more
    // often (the cheapest of two drawn, of four for the native targets),
    // so that the campaign spends its time on executions rather than on
    // compiling big programs.
    let mut cost: Vec<u64> = Vec::new();
    let mut passed: Vec<bool> = Vec::new();
    // Three times in four the parent is a program the front end accepts
    // (most mutants of a broken one fail where it does).
    let mut accepted: Vec<usize> = Vec::new();
    let mut features: HashSet<u64> = HashSet::new();
    for input in pool.clone() {
        let t = Instant::now();
        let o = run_one(target, &input, &out_dir, &mut stats);
        if o.as_ref().is_some_and(|o| o.reached[0]) {
            accepted.push(passed.len());
        }
        passed.push(o.as_ref().is_some_and(|o| o.reached[0]));
        if let Some(o) = o {
            features.extend(o.features);
            seen.insert(o.signature);
        }
        cost.push(t.elapsed().as_micros() as u64);
    }
    let start = Instant::now();
    let mut last_report = Instant::now();
    while start.elapsed().as_secs_f64() < seconds && stats.execs < max_execs {
        let mut pick = if !accepted.is_empty() && rng.below(4) != 0 {
            accepted[rng.below(accepted.len())]
        } else {
            rng.below(pool.len())
        };
        let draws = if target == Target::Front { 1 } else { 3 };
        for _ in 0..draws {
            let other = rng.below(pool.len());
            if (!passed[other], cost[other]) < (!passed[pick], cost[pick]) {
                pick = other;
            }
        }
        let child = mutate(&pool[pick], &pool, &dict, max, &mut rng);
        let t = Instant::now();
        if let Some(o) = run_one(target, &child, &out_dir, &mut stats) {
            *classes.entry(o.signature.clone()).or_default() += 1;
            // Past the front end, only programs that compile are worth
            // mutating further.
            let admissible = target == Target::Front || o.reached[0];
            seen.insert(o.signature);
            let mut new = false;
            for f in o.features {
                new |= features.insert(f);
            }
            if admissible && new && pool.len() < MAX_POOL {
                save(&keep_dir, "seed", &child, None);
                pool.push(child);
                cost.push(t.elapsed().as_micros() as u64);
                if o.reached[0] {
                    accepted.push(passed.len());
                }
                passed.push(o.reached[0]);
            }
        }
        if last_report.elapsed() > Duration::from_secs(10) {
            last_report = Instant::now();
            let delta = Stats {
                execs: stats.execs - flushed.execs,
                reached: std::array::from_fn(|k| stats.reached[k] - flushed.reached[k]),
                crashes: stats.crashes - flushed.crashes,
                internal: stats.internal - flushed.internal,
            };
            add_total(&out_dir, &delta);
            flushed = Stats { ..stats };
            eprintln!(
                "{}: {} execs ({:.0}/s), pool {}, outcomes {}, reached {:?}, crashes {}, internal {}",
                target.name(),
                stats.execs,
                stats.execs as f64 / start.elapsed().as_secs_f64(),
                pool.len(),
                seen.len(),
                stats.reached,
                stats.crashes,
                stats.internal
            );
        }
    }
    let delta = Stats {
        execs: stats.execs - flushed.execs,
        reached: std::array::from_fn(|k| stats.reached[k] - flushed.reached[k]),
        crashes: stats.crashes - flushed.crashes,
        internal: stats.internal - flushed.internal,
    };
    add_total(&out_dir, &delta);
    print_profile(stats.execs);
    let mut common: Vec<(&String, &u64)> = classes.iter().collect();
    common.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    eprintln!("most frequent outcomes:");
    for (signature, n) in common.iter().take(8) {
        let shown: String = signature.chars().take(110).collect();
        eprintln!("  {n:>9} {shown}");
    }
    let _ = writeln!(
        std::io::stdout(),
        "{} execs {} reached {:?} crashes {} internal {} outcomes {}",
        target.name(),
        stats.execs,
        stats.reached,
        stats.crashes,
        stats.internal,
        seen.len()
    );
}
