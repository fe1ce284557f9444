//! Argument lists built by name: the bridge between user values (Rust
//! slices, `--set` text, JSON) and the typed buffers a procedure is called
//! with.
//!
//! Arrays are sized from their declarations: an array `x(n)` gets `n`
//! elements from the current value of the integer argument `n`, and is
//! resized when `n` is set later, unless the user gave its elements
//! explicitly.

use super::{Error, ErrorKind};
use adjit_ir::Buffer;
use adjit_ir::{Bound, Proc, Type, VarId};
use adjit_jit::runtime::default_memory_limit;

/// A value given for an argument before the array sizes are known.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// One number: sets a scalar, or fills every element of an array.
    Scalar(f64),
    /// Elements in column-major order.
    Array(Vec<f64>),
    /// Text for a CHARACTER argument (blank padded or truncated).
    Text(String),
    /// A truth value for a LOGICAL argument (fills arrays).
    Logical(bool),
    /// An integer, exact for INTEGER arguments (INTEGER(8) values beyond
    /// 2**53 included) and rounded once for REAL ones: sets a scalar, or
    /// fills every element of an array.
    Integer(i64),
    /// Integer elements in column-major order.
    Integers(Vec<i64>),
}

/// One JSON number, kept exact while it is an integer.
enum JsonNumber {
    Int(i64),
    Float(f64),
}

impl JsonNumber {
    fn f64(&self) -> f64 {
        match *self {
            JsonNumber::Int(k) => k as f64,
            JsonNumber::Float(x) => x,
        }
    }
}

/// The numbers of a JSON array (nested arrays flattened in order; `true`
/// is 1, `false` 0; `"NaN"`, `"Infinity"`, `"-Infinity"` name those).
fn json_numbers(items: &[serde_json::Value], out: &mut Vec<JsonNumber>) -> Option<()> {
    use serde_json::Value as J;
    for item in items {
        match item {
            J::Number(n) => out.push(match n.as_i64() {
                Some(k) => JsonNumber::Int(k),
                None => JsonNumber::Float(n.as_f64()?),
            }),
            J::Bool(b) => out.push(JsonNumber::Int(*b as i64)),
            J::String(s) => out.push(JsonNumber::Float(non_finite(s)?)),
            J::Array(inner) => json_numbers(inner, out)?,
            _ => return None,
        }
    }
    Some(())
}

impl ArgValue {
    /// Parses `--set` text: `1.5`, `1,2,3`, `.true.`, `true`, or anything
    /// else as text (only valid for CHARACTER arguments). Numbers are read
    /// correctly rounded; integers (`7`, `-9223372036854775808`) stay exact.
    pub fn parse(text: &str) -> ArgValue {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            ".true." | "true" | "t" => return ArgValue::Logical(true),
            ".false." | "false" | "f" => return ArgValue::Logical(false),
            _ => {}
        }
        let parse_int = |s: &str| s.trim().parse::<i64>().ok();
        let parse_num = |s: &str| -> Option<f64> {
            let s = s.trim().to_ascii_lowercase().replace('d', "e");
            s.parse::<f64>().ok()
        };
        if t.contains(',') {
            let ints: Option<Vec<i64>> = t.split(',').map(parse_int).collect();
            if let Some(v) = ints {
                return ArgValue::Integers(v);
            }
            let items: Option<Vec<f64>> = t.split(',').map(parse_num).collect();
            if let Some(v) = items {
                return ArgValue::Array(v);
            }
        } else if let Some(k) = parse_int(t) {
            return ArgValue::Integer(k);
        } else if let Some(x) = parse_num(t) {
            return ArgValue::Scalar(x);
        }
        ArgValue::Text(text.to_string())
    }

    /// Converts a JSON value (number, array of numbers, bool, string).
    /// Numbers are read correctly rounded (serde_json's `float_roundtrip`),
    /// integers exactly;
    /// JSON has no NaN or infinity, so in arrays the strings `"NaN"`,
    /// `"Infinity"` and `"-Infinity"` (what adjit writes for them) stand for
    /// them, as a lone string does for a numeric scalar.
    pub fn from_json(value: &serde_json::Value) -> Option<ArgValue> {
        use serde_json::Value as J;
        match value {
            J::Number(n) => match n.as_i64() {
                Some(k) => Some(ArgValue::Integer(k)),
                None => n.as_f64().map(ArgValue::Scalar),
            },
            J::Bool(b) => Some(ArgValue::Logical(*b)),
            J::String(s) => Some(ArgValue::Text(s.clone())),
            J::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                json_numbers(items, &mut out)?;
                Some(if out.iter().all(|x| matches!(x, JsonNumber::Int(_))) {
                    ArgValue::Integers(
                        out.iter()
                            .map(|x| match x {
                                JsonNumber::Int(k) => *k,
                                JsonNumber::Float(_) => unreachable!("all integers"),
                            })
                            .collect(),
                    )
                } else {
                    ArgValue::Array(out.iter().map(JsonNumber::f64).collect())
                })
            }
            _ => None,
        }
    }
}

/// The arguments of one procedure call: one buffer per parameter, addressed
/// by (case-insensitive) Fortran name.
#[derive(Clone, Debug)]
pub struct Args {
    names: Vec<String>,
    params: Vec<ParamInfo>,
    buffers: Vec<Buffer>,
    explicit: Vec<bool>,
    /// Extents given for assumed sizes and lengths ([`Args::set_extent`]).
    extents: Vec<Option<usize>>,
    /// Bytes one argument buffer may take ([`Args::set_memory_limit`]).
    memory_limit: usize,
}

/// What `Args` needs to know about one parameter.
#[derive(Clone, Debug)]
struct ParamInfo {
    ty: Type,
    dims: Vec<(Bound, Option<Bound>)>,
    char_len: Option<Bound>,
    /// Parameter index of each variable a bound reads (None: not a param).
    var_param: Vec<Option<usize>>,
}

impl Args {
    /// Zero arguments for `proc` (arrays sized from the current, zero, values
    /// of the integers that bound them), each buffer limited to the
    /// machine's physical memory. An array too large for that stays empty
    /// (a call then reports its size).
    pub fn new(proc: &Proc) -> Args {
        Args::with_memory_limit(proc, default_memory_limit())
    }

    /// [`Args::new`] with buffers limited to `memory_limit` bytes each.
    pub fn with_memory_limit(proc: &Proc, memory_limit: usize) -> Args {
        let mut var_param = vec![None; proc.vars.len()];
        for (i, p) in proc.params.iter().enumerate() {
            var_param[p.index()] = Some(i);
        }
        let params: Vec<ParamInfo> = proc
            .params
            .iter()
            .map(|&p| {
                let v = proc.var(p);
                ParamInfo {
                    ty: v.ty,
                    dims: v
                        .dims
                        .iter()
                        .map(|d| (d.lower.clone(), d.upper.clone()))
                        .collect(),
                    char_len: v.char_len.clone(),
                    var_param: var_param.clone(),
                }
            })
            .collect();
        let names = proc
            .params
            .iter()
            .map(|&p| proc.var(p).name.to_ascii_lowercase())
            .collect();
        let mut args = Args {
            names,
            buffers: params.iter().map(|p| Buffer::zeros(p.ty, 0)).collect(),
            explicit: vec![false; params.len()],
            extents: vec![None; params.len()],
            params,
            memory_limit,
        };
        // A declaration too large for the limit leaves its buffer empty: the
        // call reports the size it needs.
        let _ = args.resize_implicit();
        args
    }

    /// Limits each buffer the arguments allocate from sizes the program
    /// gives (declared extents, `--set n=...`) to `bytes`: a bigger one is
    /// a usage error naming the argument, not an allocation.
    pub fn set_memory_limit(&mut self, bytes: usize) {
        self.memory_limit = bytes;
    }

    /// A zero buffer of `n` elements for parameter `i`, within the memory
    /// limit and without aborting when memory is short.
    fn zeros(&self, i: usize, n: usize) -> Result<Buffer, Error> {
        let info = &self.params[i];
        let too_big = |why: String| {
            Error::new(
                ErrorKind::Usage,
                format!(
                    "argument `{}` ({}) would need {n} elements: {why}",
                    self.names[i],
                    type_label(info)
                ),
            )
        };
        match n.checked_mul(info.ty.size()) {
            Some(bytes) if bytes <= self.memory_limit => {}
            Some(bytes) => {
                return Err(too_big(format!(
                    "{bytes} bytes, more than the memory limit of {} bytes",
                    self.memory_limit
                )))
            }
            None => return Err(too_big("more bytes than 64 bits count".into())),
        }
        Buffer::try_zeros(info.ty, n).map_err(too_big)
    }

    /// Parameter names in call order (lower case).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The parameter index of a name.
    pub fn index_of(&self, name: &str) -> Result<usize, Error> {
        let lower = name.trim().to_ascii_lowercase();
        self.names.iter().position(|n| *n == lower).ok_or_else(|| {
            Error::new(
                ErrorKind::Usage,
                format!(
                    "no argument named `{}` (arguments: {})",
                    name,
                    self.names.join(", ")
                ),
            )
        })
    }

    /// The buffers, in parameter order.
    pub fn buffers(&self) -> &[Buffer] {
        &self.buffers
    }

    /// The buffers, mutable, in parameter order.
    pub fn buffers_mut(&mut self) -> &mut [Buffer] {
        &mut self.buffers
    }

    /// The buffer of one argument.
    pub fn get(&self, name: &str) -> Result<&Buffer, Error> {
        Ok(&self.buffers[self.index_of(name)?])
    }

    /// The elements of a numeric argument as f64.
    pub fn f64s(&self, name: &str) -> Result<Vec<f64>, Error> {
        let b = self.get(name)?;
        Ok((0..b.len()).map(|i| b.get_f64(i)).collect())
    }

    /// The first element of a numeric argument as f64.
    pub fn scalar(&self, name: &str) -> Result<f64, Error> {
        let b = self.get(name)?;
        if b.is_empty() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("argument `{name}` has no elements"),
            ));
        }
        Ok(b.get_f64(0))
    }

    /// True when the parameter is an array.
    pub fn is_array(&self, index: usize) -> bool {
        !self.params[index].dims.is_empty()
    }

    /// The element type of a parameter.
    pub fn ty(&self, index: usize) -> Type {
        self.params[index].ty
    }

    /// What argument `index` is, in Fortran's words (`an INTEGER scalar`,
    /// `a DOUBLE PRECISION array`), for messages.
    pub fn describe(&self, index: usize) -> String {
        type_label(&self.params[index])
    }

    /// Sets an argument from a value: scalars take one number, arrays take
    /// their elements (or one number to fill), CHARACTER takes text.
    /// Setting an OPTIONAL dummy (or a component of one) makes it present.
    pub fn set(&mut self, name: &str, value: ArgValue) -> Result<(), Error> {
        self.set_value(name, value)?;
        self.mark_present(name);
        Ok(())
    }

    /// Sets the hidden presence flag (`_present_x`) of the OPTIONAL dummy
    /// that `name` is or is a component of (`p%x` of dummy `p`), if any.
    fn mark_present(&mut self, name: &str) {
        let dummy = name.split('%').next().unwrap_or(name);
        let flag = format!("_present_{dummy}");
        if let Some(j) = self
            .names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(&flag))
        {
            if self.params[j].ty == Type::Bool && self.params[j].dims.is_empty() {
                self.buffers[j] = Buffer::Bool(vec![1]);
            }
        }
    }

    /// [`Args::set`] without the presence flag.
    fn set_value(&mut self, name: &str, value: ArgValue) -> Result<(), Error> {
        let i = self.index_of(name)?;
        let value = match self.exact_integers(i, name, value)? {
            Ok(()) => return Ok(()),
            Err(value) => value,
        };
        let info = &self.params[i];
        let bad = |what: &str| {
            Error::new(
                ErrorKind::Usage,
                format!("cannot set `{name}` ({}) from {what}", type_label(info)),
            )
        };
        match (&value, info.ty) {
            (ArgValue::Text(t), Type::Char) if info.char_len.is_none() && info.dims.is_empty() => {
                // Assumed length (`character(*)`): the text sets the length,
                // unless an extent was given.
                let mut bytes = if t.is_empty() {
                    b" ".to_vec()
                } else {
                    t.as_bytes().to_vec()
                };
                if let Some(n) = self.extents[i] {
                    bytes.resize(n, b' ');
                }
                self.buffers[i] = Buffer::Char(bytes);
            }
            (ArgValue::Text(t), Type::Char) => {
                let len = self.char_len(i);
                let count = self.declared_len(i).max(1);
                let mut buffer = self.zeros(i, len.saturating_mul(count))?;
                if let Buffer::Char(bytes) = &mut buffer {
                    for (dst, src) in bytes.iter_mut().zip(t.bytes()) {
                        *dst = src;
                    }
                }
                self.buffers[i] = buffer;
            }
            (ArgValue::Text(t), ty) => match non_finite(t) {
                Some(x) if ty.is_float() => return self.set(name, ArgValue::Scalar(x)),
                _ => return Err(bad("text")),
            },
            (_, Type::Char) => return Err(bad("a number")),
            (ArgValue::Scalar(x), ty) if ty.is_int() && !integral(*x, ty) => {
                return Err(bad(&not_integral(*x)))
            }
            (ArgValue::Array(v), ty) if ty.is_int() && v.iter().any(|x| !integral(*x, ty)) => {
                let x = v
                    .iter()
                    .find(|x| !integral(**x, ty))
                    .copied()
                    .unwrap_or(0.0);
                return Err(bad(&not_integral(x)));
            }
            (ArgValue::Scalar(x), _) => {
                let n = if info.dims.is_empty() {
                    1
                } else {
                    self.declared_len(i)
                };
                let mut b = self.zeros(i, n)?;
                (0..n).for_each(|k| b.set_f64(k, *x));
                self.buffers[i] = b;
                let info = &self.params[i];
                self.explicit[i] = !info.dims.is_empty() && self.has_assumed_dim(i);
            }
            (ArgValue::Logical(v), Type::Bool) => {
                let n = self.declared_len(i).max(1);
                let mut b = self.zeros(i, n)?;
                (0..n).for_each(|k| b.set_f64(k, *v as u8 as f64));
                self.buffers[i] = b;
            }
            (ArgValue::Logical(_), _) => return Err(bad("a logical")),
            (ArgValue::Integer(_) | ArgValue::Integers(_), _) => {
                unreachable!("integers are set by exact_integers")
            }
            (ArgValue::Array(v), _) => {
                if info.dims.is_empty() && v.len() != 1 {
                    return Err(bad(&format!("{} values", v.len())));
                }
                let mut b = Buffer::zeros(info.ty, v.len());
                v.iter().enumerate().for_each(|(k, x)| b.set_f64(k, *x));
                self.buffers[i] = b;
                self.explicit[i] = !info.dims.is_empty();
            }
        }
        if info_is_int_scalar(&self.params[i]) {
            self.resize_implicit()?;
        }
        Ok(())
    }

    /// Sets parameter `i` from integers exactly when it is an INTEGER
    /// parameter (`Ok(Ok(()))`); otherwise gives back the value with its
    /// integers as floats, each rounded once to the parameter's type.
    fn exact_integers(
        &mut self,
        i: usize,
        name: &str,
        value: ArgValue,
    ) -> Result<Result<(), ArgValue>, Error> {
        let ty = self.params[i].ty;
        let (items, fill) = match value {
            ArgValue::Integer(k) => (vec![k], true),
            ArgValue::Integers(v) => (v, false),
            other => return Ok(Err(other)),
        };
        if !ty.is_int() {
            // One rounding: i64 to f32 directly, not through f64.
            let float = |k: i64| {
                if ty == Type::F32 {
                    k as f32 as f64
                } else {
                    k as f64
                }
            };
            return Ok(Err(if fill {
                ArgValue::Scalar(float(items[0]))
            } else {
                ArgValue::Array(items.into_iter().map(float).collect())
            }));
        }
        let info = &self.params[i];
        if info.dims.is_empty() && items.len() != 1 {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "cannot set `{name}` ({}) from {} values",
                    type_label(info),
                    items.len()
                ),
            ));
        }
        if ty == Type::I32 {
            if let Some(k) = items.iter().find(|&&k| i32::try_from(k).is_err()) {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!("{k} is out of range for `{name}` ({})", type_label(info)),
                ));
            }
        }
        let n = if !fill {
            items.len()
        } else if info.dims.is_empty() {
            1
        } else {
            self.declared_len(i)
        };
        let value = |k: usize| items[if fill { 0 } else { k }];
        let mut buffer = self.zeros(i, n)?;
        match &mut buffer {
            Buffer::I32(b) => b
                .iter_mut()
                .enumerate()
                .for_each(|(k, x)| *x = value(k) as i32),
            Buffer::I64(b) => b.iter_mut().enumerate().for_each(|(k, x)| *x = value(k)),
            _ => {}
        }
        self.buffers[i] = buffer;
        self.explicit[i] = !info.dims.is_empty() && (!fill || self.has_assumed_dim(i));
        if info.dims.is_empty() {
            self.resize_implicit()?;
        }
        Ok(Ok(()))
    }

    /// Applies `NAME=VALUE` settings (the `--set` syntax of the command
    /// line). Scalars are set before arrays so that `x(n)` is sized by `n`
    /// before it is filled, whatever the order given.
    pub fn apply_settings<S: AsRef<str>>(&mut self, settings: &[S]) -> Result<(), Error> {
        let mut parsed: Vec<(bool, &str, &str)> = Vec::new();
        for s in settings {
            let s = s.as_ref();
            let (name, value) = s.split_once('=').ok_or_else(|| {
                Error::new(ErrorKind::Usage, format!("expected NAME=VALUE, got `{s}`"))
            })?;
            let array = self.is_array(self.index_of(name)?);
            parsed.push((array, name.trim(), value));
        }
        parsed.sort_by_key(|p| p.0);
        for (_, name, value) in parsed {
            // A CHARACTER argument takes the text as written, even one
            // that reads as a logical or a number (`trans=T`, `task=F`).
            let value = if self.ty(self.index_of(name)?) == Type::Char {
                ArgValue::Text(value.to_string())
            } else {
                ArgValue::parse(value)
            };
            self.set(name, value)?;
        }
        Ok(())
    }

    /// Applies a JSON object of argument values (numbers, arrays, booleans,
    /// strings), integers first.
    pub fn apply_json(&mut self, json: &serde_json::Value) -> Result<(), Error> {
        let obj = json.as_object().ok_or_else(|| {
            Error::new(
                ErrorKind::Usage,
                "expected a JSON object of argument values",
            )
        })?;
        let mut entries: Vec<(&String, &serde_json::Value)> = obj.iter().collect();
        entries.sort_by_key(|(_, v)| !v.is_i64());
        for (name, value) in entries {
            let v = ArgValue::from_json(value).ok_or_else(|| {
                Error::new(ErrorKind::Usage, format!("unusable value for `{name}`"))
            })?;
            self.set(name, v)?;
        }
        Ok(())
    }

    /// The first array argument given more values than it has elements:
    /// `(name, values given, elements)`. Assumed-size arrays (`x(*)`) take
    /// any number; an array given no values is never over-full.
    pub fn overfull(&self) -> Option<(&str, usize, usize)> {
        (0..self.params.len()).find_map(|i| {
            let info = &self.params[i];
            if info.dims.is_empty()
                || info.ty == Type::Char
                || !self.explicit[i]
                || self.has_assumed_dim(i)
            {
                return None;
            }
            let (given, declared) = (self.buffers[i].len(), self.declared_len(i));
            (given > declared).then_some((self.names[i].as_str(), given, declared))
        })
    }

    /// The first assumed-shape array of rank > 1 given values without a
    /// shape ([`Args::set_shape`]): its name and rank. Its hidden extents
    /// would be 0 and the procedure would see no elements.
    pub fn missing_shape(&self) -> Option<(&str, usize)> {
        (0..self.params.len()).find_map(|i| {
            let prefix = format!("_extent_{}_", self.names[i]);
            let unset = self.names.iter().enumerate().any(|(h, n)| {
                n.starts_with(&prefix)
                    && self.buffers[h].len() == 1
                    && self.buffers[h].get_f64(0) == 0.0
                    && !self.explicit[h]
            });
            (unset && !self.buffers[i].is_empty())
                .then(|| (self.names[i].as_str(), self.params[i].dims.len()))
        })
    }

    /// Sets a numeric scalar.
    pub fn set_scalar(&mut self, name: &str, value: f64) -> Result<(), Error> {
        self.set(name, ArgValue::Scalar(value))
    }

    /// Sets an array's elements (column-major).
    pub fn set_array(&mut self, name: &str, values: &[f64]) -> Result<(), Error> {
        self.set(name, ArgValue::Array(values.to_vec()))
    }

    /// Gives an assumed-size array (`x(*)`, `a(ld, *)`) the extent `n` in
    /// its last dimension, or an assumed-length CHARACTER scalar
    /// (`character*(*)`) the length `n` (the command line's `--extent
    /// x=N`). Existing values are kept (blank or zero padded); the array
    /// follows later changes of the integers its other extents read.
    /// Values set afterwards with as many elements as they have override
    /// it.
    pub fn set_extent(&mut self, name: &str, n: usize) -> Result<(), Error> {
        let i = self.index_of(name)?;
        let info = &self.params[i];
        let assumed_len = info.ty == Type::Char && info.char_len.is_none() && info.dims.is_empty();
        if !self.has_assumed_dim(i) && !assumed_len {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "`{name}` ({}) has no assumed size or length: its extents come from its declaration",
                    type_label(info)
                ),
            ));
        }
        self.extents[i] = Some(n);
        self.explicit[i] = false;
        self.resize_implicit()
    }

    /// Gives an array its shape, one extent per dimension (the command
    /// line's `--extent a=2,3`). For an assumed-shape dummy of rank > 1
    /// (`a(:, :)`) this sets the extents the procedure receives as hidden
    /// arguments, so callers never name them; for an assumed-size or
    /// rank-1 assumed-shape array it is [`Args::set_extent`] of the last
    /// extent after checking the others against the declaration.
    pub fn set_shape(&mut self, name: &str, shape: &[usize]) -> Result<(), Error> {
        let i = self.index_of(name)?;
        let rank = self.params[i].dims.len();
        let usage = |m: String| Error::new(ErrorKind::Usage, m);
        if rank == 0 || shape.len() != rank {
            return Err(usage(format!(
                "`{name}` ({}) has rank {rank}, so its shape has {rank} extents, not {}",
                type_label(&self.params[i]),
                shape.len()
            )));
        }
        if !self.has_assumed_dim(i) {
            return Err(usage(format!(
                "`{name}` ({}) has no assumed shape or size: its extents come from its declaration",
                type_label(&self.params[i])
            )));
        }
        for (k, &n) in shape[..rank - 1].iter().enumerate() {
            let hidden = format!("_extent_{}_{}", name.trim().to_ascii_lowercase(), k + 1);
            match self.names.iter().position(|x| *x == hidden) {
                Some(h) => {
                    let value =
                        i64::try_from(n).map_err(|_| usage(format!("extent {n} too large")))?;
                    self.buffers[h] = Buffer::I64(vec![value]);
                    self.explicit[h] = true;
                }
                None => {
                    let (lower, upper) = self.params[i].dims[k].clone();
                    let declared = upper.map(|u| {
                        let info = &self.params[i];
                        self.eval(info, &u) - self.eval(info, &lower) + 1
                    });
                    if declared != Some(n as i64) {
                        return Err(usage(format!(
                            "`{name}` has extent {} in dimension {}, not {n}",
                            declared.map_or("*".to_string(), |d| d.to_string()),
                            k + 1
                        )));
                    }
                }
            }
        }
        self.set_extent(name, shape[rank - 1])
    }

    /// The rank of the argument called `name`.
    pub fn rank(&self, name: &str) -> Result<usize, Error> {
        Ok(self.params[self.index_of(name)?].dims.len())
    }

    /// True for the hidden arguments the engine fills itself (the extents
    /// of assumed-shape dummies of rank > 1, set by [`Args::set_shape`],
    /// and the lower bounds of ALLOCATABLE dummies, left at 1): outputs
    /// leave them out.
    pub fn is_hidden(&self, index: usize) -> bool {
        self.names
            .get(index)
            .is_some_and(|n| n.starts_with("_extent_") || n.starts_with("_lbound_"))
    }

    /// The storage units (elements, bytes for characters) parameter `i`
    /// takes with extent `n` given to its assumed dimension or length.
    fn units_with_extent(&self, i: usize, n: usize) -> usize {
        let info = &self.params[i];
        if info.dims.is_empty() {
            return n;
        }
        let mut per: i64 = 1;
        for (lower, upper) in &info.dims {
            if let Some(upper) = upper {
                per = per
                    .saturating_mul((self.eval(info, upper) - self.eval(info, lower) + 1).max(0));
            }
        }
        let len = match &info.char_len {
            Some(b) if info.ty == Type::Char => self.eval(info, b).max(0) as usize,
            _ => 1,
        };
        (per.clamp(0, 1 << 40) as usize)
            .saturating_mul(n)
            .saturating_mul(len)
    }

    /// Replaces a buffer wholesale (its type must match).
    pub fn set_buffer(&mut self, name: &str, buffer: Buffer) -> Result<(), Error> {
        let i = self.index_of(name)?;
        if buffer.ty() != self.params[i].ty {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "argument `{name}` is {}, not {}",
                    self.params[i].ty.name(),
                    buffer.ty().name()
                ),
            ));
        }
        self.buffers[i] = buffer;
        self.explicit[i] = !self.params[i].dims.is_empty();
        self.mark_present(name);
        if info_is_int_scalar(&self.params[i]) {
            self.resize_implicit()?;
        }
        Ok(())
    }

    /// The number of elements the declaration of parameter `i` requires
    /// under the current integer arguments (assumed dimensions count as the
    /// current buffer's share).
    pub fn declared_len(&self, i: usize) -> usize {
        let info = &self.params[i];
        if info.dims.is_empty() {
            return 1;
        }
        let mut n: i64 = 1;
        for (lower, upper) in &info.dims {
            let Some(upper) = upper else {
                let per = n.max(1) as usize;
                let have = self.buffers[i].len() / self.char_len(i).max(1);
                return have / per * per;
            };
            let lo = self.eval(info, lower);
            let hi = self.eval(info, upper);
            n = n.saturating_mul((hi - lo + 1).max(0));
        }
        n.clamp(0, 1 << 40) as usize
    }

    /// Lower and upper bounds of each dimension of parameter `i`, under the
    /// current integer arguments (an assumed upper bound is derived from the
    /// buffer length).
    pub fn bounds(&self, i: usize) -> Vec<(i64, i64)> {
        let info = &self.params[i];
        let mut out = Vec::new();
        let mut n: i64 = 1;
        for (lower, upper) in &info.dims {
            let lo = self.eval(info, lower);
            let hi = match upper {
                Some(u) => self.eval(info, u),
                None => {
                    let have = (self.buffers[i].len() / self.char_len(i).max(1)) as i64;
                    lo + have / n.max(1) - 1
                }
            };
            n = n.saturating_mul((hi - lo + 1).max(0));
            out.push((lo, hi));
        }
        out
    }

    /// Flat column-major offset of a subscript tuple of parameter `i`.
    pub fn offset(&self, i: usize, subscripts: &[i64]) -> Result<usize, Error> {
        let bounds = self.bounds(i);
        if subscripts.len() != bounds.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "`{}` has {} dimension(s), {} subscript(s) given",
                    self.names[i],
                    bounds.len(),
                    subscripts.len()
                ),
            ));
        }
        let mut offset = 0i64;
        let mut stride = 1i64;
        for (&s, &(lo, hi)) in subscripts.iter().zip(&bounds) {
            if s < lo || s > hi {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!("subscript {s} of `{}` outside {lo}:{hi}", self.names[i]),
                ));
            }
            offset += (s - lo) * stride;
            stride *= hi - lo + 1;
        }
        Ok(offset as usize)
    }

    /// The length of each CHARACTER element of parameter `i` (1 otherwise).
    pub fn char_len(&self, i: usize) -> usize {
        let info = &self.params[i];
        if info.ty == Type::Char && info.char_len.is_none() {
            // Assumed length: whatever the buffer holds per element.
            let count = if info.dims.is_empty() {
                1
            } else {
                self.declared_len_elements(i)
            };
            return (self.buffers[i].len() / count.max(1)).max(1);
        }
        info.char_len
            .as_ref()
            .map(|b| self.eval(info, b).max(0) as usize)
            .unwrap_or(1)
    }

    /// Element count of a character array from its bounds alone.
    fn declared_len_elements(&self, i: usize) -> usize {
        let info = &self.params[i];
        let mut n: i64 = 1;
        for (lower, upper) in &info.dims {
            let Some(upper) = upper else { return 1 };
            n = n.saturating_mul((self.eval(info, upper) - self.eval(info, lower) + 1).max(0));
        }
        n.clamp(0, 1 << 40) as usize
    }

    fn has_assumed_dim(&self, i: usize) -> bool {
        self.params[i].dims.iter().any(|d| d.1.is_none())
    }

    fn eval(&self, info: &ParamInfo, bound: &Bound) -> i64 {
        bound.eval(&mut |var: VarId| {
            info.var_param
                .get(var.index())
                .copied()
                .flatten()
                .and_then(|p| {
                    let b = &self.buffers[p];
                    (!b.is_empty() && b.ty().is_int()).then(|| b.get_f64(0) as i64)
                })
                .unwrap_or(0)
        })
    }

    /// Re-sizes every array and character buffer not set explicitly to its
    /// declared size, keeping existing elements; fails (changing nothing
    /// more) on a size past the memory limit.
    fn resize_implicit(&mut self) -> Result<(), Error> {
        for i in 0..self.params.len() {
            let extent = self.extents[i].filter(|_| !self.explicit[i]);
            if extent.is_none() && (self.explicit[i] || self.has_assumed_dim(i)) {
                continue;
            }
            let info = &self.params[i];
            let want = if let Some(n) = extent {
                self.units_with_extent(i, n)
            } else if info.ty == Type::Char {
                self.char_len(i) * self.declared_len(i)
            } else if info.dims.is_empty() {
                1
            } else {
                self.declared_len(i)
            };
            let old = &self.buffers[i];
            if old.len() == want {
                continue;
            }
            let mut b = self.zeros(i, want)?;
            for k in 0..want.min(old.len()) {
                b.set_f64(k, old.get_f64(k));
            }
            self.buffers[i] = b;
        }
        Ok(())
    }
}

/// The non-finite value a string names: `NaN`, `Infinity`, `-Infinity`
/// (case-insensitive; also `inf`, `+inf`, `-inf`).
fn non_finite(text: &str) -> Option<f64> {
    match text.trim().to_ascii_lowercase().as_str() {
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        "infinity" | "+infinity" | "inf" | "+inf" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// True when `x` is a whole number that `ty` (an integer type) holds.
/// Why `x` cannot be an INTEGER value (it failed [`integral`]).
fn not_integral(x: f64) -> String {
    if x.fract() != 0.0 || !x.is_finite() {
        format!("{x}, not a whole number")
    } else {
        format!("{x}, out of range")
    }
}

/// `x` is a whole number within the range of the integer type `ty`.
fn integral(x: f64, ty: Type) -> bool {
    let max = if ty == Type::I32 {
        f64::from(i32::MAX)
    } else {
        i64::MAX as f64
    };
    x.fract() == 0.0 && x.abs() <= max
}

fn info_is_int_scalar(info: &ParamInfo) -> bool {
    info.dims.is_empty() && info.ty.is_int()
}

/// What a parameter is, in Fortran's words (`an INTEGER scalar`, `a
/// DOUBLE PRECISION array`), never the IR's type names.
fn type_label(info: &ParamInfo) -> String {
    let ty = match info.ty {
        Type::F32 => "a REAL",
        Type::F64 => "a DOUBLE PRECISION",
        Type::I32 => "an INTEGER",
        Type::I64 => "an INTEGER(8)",
        Type::Bool => "a LOGICAL",
        Type::Char => "a CHARACTER",
    };
    let shape = if info.dims.is_empty() {
        "scalar"
    } else {
        "array"
    };
    format!("{ty} {shape}")
}
