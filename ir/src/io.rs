//! Fortran I/O as gfortran does it, shared by the interpreter and the JIT's
//! runtime helpers: list-directed output (`PRINT *`, `WRITE(*,*)`),
//! formatted output under a format specification (I, F, E, ES, D, G, A, L,
//! X, P, `/`, `:`, literals, repeat counts, groups and format reversion),
//! and list-directed input (`READ *`); internal files (WRITE into and READ
//! from a CHARACTER variable, list-directed or formatted) and IOSTAT=
//! (errors become the statement's status instead of failures).
//!
//! An [`IoState`] carries one program's channels ([`Channels`]: where output
//! goes and where input comes from, standard output and input unless the
//! caller redirects them) and the statement in progress: the steps of
//! [`crate::IoOp`] call [`IoState::begin_write`], [`IoState::put`],
//! [`IoState::end_write`], [`IoState::begin_read`], [`IoState::get`] and
//! [`IoState::end_read`]. Output is formatted when the statement ends, so a
//! statement that fails writes nothing.
//!
//! The same steps also write and read the program's kept records
//! ([`Kept`]: what it keeps between calls made from outside, such as the
//! allocation of an ALLOCATABLE module array), bracketed by
//! [`IoState::begin_keep`] and [`IoState::begin_restore`] instead.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

/// A value transferred by an I/O statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// An integer and its size in bytes (4 or 8).
    Int(i64, u8),
    /// A real and whether it is double precision.
    Real(f64, bool),
    /// A logical.
    Logical(bool),
    /// Character data.
    Char(Vec<u8>),
}

/// Where a program's output goes and where its input comes from.
#[derive(Clone)]
pub struct Channels {
    /// The output of PRINT and WRITE.
    pub output: Arc<Mutex<dyn Write + Send>>,
    /// The input of READ.
    pub input: Arc<Mutex<dyn BufRead + Send>>,
}

impl Channels {
    /// True when both channels are the very ones of `other` (not copies).
    #[inline]
    pub fn same_as(&self, other: &Channels) -> bool {
        Arc::ptr_eq(&self.output, &other.output) && Arc::ptr_eq(&self.input, &other.input)
    }

    /// The process's standard output and standard input.
    pub fn standard() -> Channels {
        Channels {
            output: Arc::new(Mutex::new(std::io::stdout())),
            input: Arc::new(Mutex::new(std::io::BufReader::new(std::io::stdin()))),
        }
    }
    /// Output to the process's standard error (input from standard input).
    pub fn standard_error() -> Channels {
        Channels {
            output: Arc::new(Mutex::new(std::io::stderr())),
            ..Channels::standard()
        }
    }
}

impl Default for Channels {
    fn default() -> Channels {
        Channels::standard()
    }
}

impl fmt::Debug for Channels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Channels")
    }
}

/// The records a program keeps between calls made from outside, by name:
/// the values one kept record held when it was last written (for an
/// ALLOCATABLE module or SAVE array: whether it is allocated, its bounds
/// and its elements). Clones share the records; they are released with the
/// last clone.
#[derive(Clone, Debug, Default)]
pub struct Kept(Arc<Mutex<HashMap<Vec<u8>, Vec<Item>>>>);

impl Kept {
    /// The record `name` (a copy), if one was kept.
    fn get(&self, name: &[u8]) -> Option<Vec<Item>> {
        self.0.lock().ok()?.get(name).cloned()
    }
    /// Replaces the record `name`.
    fn put(&self, name: &[u8], items: Vec<Item>) -> Result<(), String> {
        self.0
            .lock()
            .map_err(|_| "the kept records are poisoned".to_string())?
            .insert(name.to_vec(), items);
        Ok(())
    }
    /// Number of values held by all the records (what a program keeps
    /// between calls; it does not grow with the number of calls).
    pub fn values(&self) -> usize {
        self.0
            .lock()
            .map(|m| m.values().map(Vec::len).sum())
            .unwrap_or(0)
    }
    /// Whether `self` and `other` share their records.
    pub fn shares_with(&self, other: &Kept) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// A copy of the records that shares nothing with them.
    pub fn snapshot(&self) -> Kept {
        let records = self.0.lock().map(|m| m.clone()).unwrap_or_default();
        Kept(Arc::new(Mutex::new(records)))
    }
    /// Replaces the records by copies of those of `other`.
    pub fn assign(&self, other: &Kept) {
        if self.shares_with(other) {
            return;
        }
        let records = other.0.lock().map(|m| m.clone()).unwrap_or_default();
        if let Ok(mut mine) = self.0.lock() {
            *mine = records;
        }
    }
}

impl PartialEq for Kept {
    /// Equal records, by value.
    fn eq(&self, other: &Kept) -> bool {
        self.shares_with(other)
            || match (self.0.lock(), other.0.lock()) {
                (Ok(a), Ok(b)) => *a == *b,
                _ => false,
            }
    }
}

/// The I/O state of one running program: its channels and the statement in
/// progress.
#[derive(Debug, Default)]
pub struct IoState {
    channels: Channels,
    /// The records kept between calls.
    kept: Kept,
    /// The statement in progress, or the one last ended.
    stmt: Statement,
    /// Whether `stmt` is in progress.
    active: bool,
    /// Statements suspended by one that began while they were in progress
    /// (an internal WRITE in a function referenced among a PRINT's items),
    /// innermost last: the next step of such a statement resumes it.
    suspended: Vec<Statement>,
    /// A statement began or stepped since the last
    /// [`IoState::set_channels`]: until then the statement state is the
    /// pristine one it leaves, and setting the same channels again is a
    /// comparison (a reused runtime sets them on every call).
    touched: bool,
}

/// The state of one I/O statement.
#[derive(Debug, Default)]
struct Statement {
    /// The name of the kept record the output statement writes (`None`:
    /// it prints).
    keep: Option<Vec<u8>>,
    /// The values not yet read of the kept record the input statement
    /// reads (`None`: it reads the input channel).
    restore: Option<VecDeque<Item>>,
    /// The format of the output statement (`None`: list-directed).
    format: Option<Vec<u8>>,
    /// The items of the output statement.
    items: Vec<Item>,
    /// The characters of the character item being put in pieces
    /// ([`IoState::join_chars`]).
    joined: Option<Vec<u8>>,
    /// Values of the input record(s) not yet read.
    tokens: VecDeque<String>,
    /// The input statement reads an internal file: when its values run
    /// out, the file ends (no more records).
    internal: bool,
    /// The fields of a formatted internal input statement.
    fields: Option<FieldReader>,
    /// Errors of the statement become its status (IOSTAT=).
    catch: bool,
    /// The status of the statement.
    status: i32,
}

/// IOSTAT value of an end of file (gfortran's, and ISO_FORTRAN_ENV's
/// `iostat_end`).
pub const IOSTAT_END: i32 = -1;
/// IOSTAT value of an end of record (ISO_FORTRAN_ENV's `iostat_eor`).
pub const IOSTAT_EOR: i32 = -2;
/// IOSTAT value of a value that does not read as its item's type
/// (gfortran's `LIBERROR_READ_VALUE`).
pub const IOSTAT_BAD_VALUE: i32 = 5010;

/// An I/O error: its IOSTAT value and its message.
type Failure = (i32, String);

impl IoState {
    /// A state writing and reading through `channels`.
    pub fn new(channels: Channels) -> IoState {
        // Not `..IoState::default()`: that would open standard channels
        // (allocations on every call of a reused runtime) only to drop them.
        IoState {
            channels,
            kept: Kept::default(),
            stmt: Statement::default(),
            active: false,
            suspended: Vec::new(),
            touched: false,
        }
    }
    /// Writes and reads through `channels` from now on (the kept records
    /// stay).
    #[inline]
    pub fn set_channels(&mut self, channels: &Channels) {
        // Field by field, not `IoState::new`: a reused runtime sets its
        // channels on every call, and a new state would allocate. The same
        // channels again (the common case) are not cloned.
        if !self.channels.same_as(channels) {
            self.channels = channels.clone();
        }
        if self.touched {
            self.reset_statement();
        }
    }
    /// True when no statement left state behind since the channels were
    /// last set (setting the same channels again would change nothing).
    #[inline]
    pub fn is_idle(&self) -> bool {
        !self.touched
    }
    /// Puts the statement state back as a new state has it.
    fn reset_statement(&mut self) {
        self.touched = false;
        let Statement {
            keep,
            restore,
            format,
            items,
            joined,
            tokens,
            internal,
            fields,
            catch,
            status,
        } = &mut self.stmt;
        *keep = None;
        *restore = None;
        *format = None;
        items.clear();
        *joined = None;
        tokens.clear();
        *internal = false;
        *fields = None;
        *catch = false;
        *status = 0;
        self.active = false;
        self.suspended.clear();
    }
    /// Starts a statement: one in progress is suspended until this one
    /// ends (see [`IoState::resume`]).
    fn begin(&mut self) {
        self.touched = true;
        if self.active {
            self.suspended.push(std::mem::take(&mut self.stmt));
        }
        self.active = true;
    }
    /// Ends the statement in progress (its status stays readable).
    fn end(&mut self) {
        self.active = false;
    }
    /// Before a step of a statement: when the last one ended was begun
    /// inside a suspended statement, that statement continues.
    fn resume(&mut self) {
        self.touched = true;
        if !self.active {
            if let Some(outer) = self.suspended.pop() {
                self.stmt = outer;
                self.active = true;
            }
        }
    }
    /// Keeps records in `kept` (shared with other states) from now on.
    #[inline]
    pub fn set_kept(&mut self, kept: &Kept) {
        if !Arc::ptr_eq(&self.kept.0, &kept.0) {
            self.kept = kept.clone();
        }
    }
    /// Starts an output statement (`None`: list-directed).
    pub fn begin_write(&mut self, format: Option<&[u8]>) {
        self.begin();
        self.stmt.format = format.map(<[u8]>::to_vec);
        self.stmt.keep = None;
        self.stmt.items.clear();
        self.stmt.joined = None;
        self.stmt.catch = false;
        self.stmt.status = 0;
    }
    /// Makes the errors of the statement in progress its status instead of
    /// failures (IOSTAT=): see [`crate::IoOp::CatchErrors`].
    pub fn catch_errors(&mut self) {
        self.resume();
        self.stmt.catch = true;
    }
    /// The status of the statement in progress or last ended (0, or an
    /// IOSTAT value such as [`IOSTAT_END`]).
    pub fn status(&self) -> i32 {
        self.stmt.status
    }
    /// Whether the statement in progress caught an error (its items are
    /// no longer transferred).
    pub fn failed(&self) -> bool {
        self.stmt.status != 0
    }
    /// An error of the statement in progress: its status when errors are
    /// caught (`Ok`), else the failure's message.
    fn fail(&mut self, (code, message): Failure) -> Result<(), String> {
        if self.stmt.catch {
            self.stmt.status = code;
            Ok(())
        } else {
            Err(message)
        }
    }
    /// Ends the output statement into an internal file of `len`
    /// characters: the record, blank-padded to `len` (`None`: an error was
    /// caught, nothing is stored).
    pub fn end_write_to(&mut self, len: usize) -> Result<Option<Vec<u8>>, String> {
        self.resume();
        let record = self.record_of(len);
        self.end();
        record
    }
    /// The record [`IoState::end_write_to`] stores.
    fn record_of(&mut self, len: usize) -> Result<Option<Vec<u8>>, String> {
        let items = std::mem::take(&mut self.stmt.items);
        let text = match self.stmt.format.take() {
            None => list_directed(&items),
            Some(f) => formatted(&parse_format(&f)?, &items)?,
        };
        let record = text.strip_suffix('\n').unwrap_or(&text);
        if record.contains('\n') || record.len() > len {
            let what = if record.contains('\n') {
                "more than one record".to_string()
            } else {
                format!("{} characters", record.len())
            };
            self.fail((
                IOSTAT_EOR,
                format!("end of record: {what} written to a CHARACTER variable of length {len}"),
            ))?;
            return Ok(None);
        }
        let mut bytes = record.as_bytes().to_vec();
        bytes.resize(len, b' ');
        Ok(Some(bytes))
    }
    /// Starts an input statement reading the internal file `text`
    /// (list-directed without a format).
    pub fn begin_read_from(&mut self, text: &[u8], format: Option<&[u8]>) -> Result<(), String> {
        self.begin_read();
        self.stmt.internal = true;
        match format {
            None => self.stmt.tokens = split_values(&String::from_utf8_lossy(text))?,
            Some(f) => {
                self.stmt.fields = Some(FieldReader::new(&parse_format(f)?, text));
            }
        }
        Ok(())
    }
    /// Starts writing the kept record `name`: the items put until
    /// [`IoState::end_write`] replace it.
    pub fn begin_keep(&mut self, name: &[u8]) {
        self.begin();
        self.stmt.format = None;
        self.stmt.keep = Some(name.to_vec());
        self.stmt.items.clear();
    }
    /// Starts reading the kept record `name` (a record never kept reads as
    /// the logical false): [`IoState::get`] returns its values in order until
    /// [`IoState::end_read`].
    pub fn begin_restore(&mut self, name: &[u8]) {
        self.begin();
        let items = self
            .kept
            .get(name)
            .unwrap_or_else(|| vec![Item::Logical(false)]);
        self.stmt.restore = Some(items.into());
    }
    /// Adds an item to the output statement in progress (characters to
    /// the item being joined, if any).
    pub fn put(&mut self, item: Item) {
        self.resume();
        match (&mut self.stmt.joined, item) {
            (Some(joined), Item::Char(text)) => joined.extend_from_slice(&text),
            (_, item) => self.stmt.items.push(item),
        }
    }
    /// Starts (`start`) or ends one character item put in pieces: the
    /// characters put in between form a single item (see
    /// [`crate::IoOp::JoinChars`]).
    pub fn join_chars(&mut self, start: bool) {
        self.resume();
        if start {
            self.stmt.joined = Some(Vec::new());
        } else if let Some(text) = self.stmt.joined.take() {
            self.stmt.items.push(Item::Char(text));
        }
    }
    /// Formats the output statement and writes it.
    pub fn end_write(&mut self) -> Result<(), String> {
        self.resume();
        let written = self.write_statement();
        self.end();
        written
    }
    /// Formats the output statement and writes it (or keeps its record).
    fn write_statement(&mut self) -> Result<(), String> {
        let items = std::mem::take(&mut self.stmt.items);
        if let Some(name) = self.stmt.keep.take() {
            return self.kept.put(&name, items);
        }
        let text = match self.stmt.format.take() {
            None => list_directed(&items),
            Some(f) => formatted(&parse_format(&f)?, &items)?,
        };
        let mut out = self
            .channels
            .output
            .lock()
            .map_err(|_| "the output channel is poisoned".to_string())?;
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write the output: {e}"))
    }
    /// Starts a list-directed input statement.
    pub fn begin_read(&mut self) {
        self.begin();
        self.stmt.restore = None;
        self.stmt.tokens.clear();
        self.stmt.internal = false;
        self.stmt.fields = None;
        self.stmt.catch = false;
        self.stmt.status = 0;
    }
    /// Reads the next value of the input statement in progress, for an
    /// item of the given kind (`Item` with a placeholder value; a
    /// character item's length is the number of bytes it receives).
    pub fn get(&mut self, kind: &Item) -> Result<Item, String> {
        self.resume();
        if self.failed() {
            return Ok(zero(kind));
        }
        match self.read_value(kind) {
            Ok(item) => Ok(item),
            Err(failure) => self.fail(failure).map(|()| zero(kind)),
        }
    }

    /// The next value for an item of the kind of `kind`.
    fn read_value(&mut self, kind: &Item) -> Result<Item, Failure> {
        if let Some(fields) = &mut self.stmt.fields {
            return fields.read(kind);
        }
        if let Some(values) = &mut self.stmt.restore {
            return match (values.pop_front(), kind) {
                (Some(Item::Int(v, _)), Item::Int(_, size)) => Ok(Item::Int(v, *size)),
                (Some(Item::Real(x, _)), Item::Real(_, double)) => Ok(Item::Real(x, *double)),
                (Some(Item::Logical(b)), Item::Logical(_)) => Ok(Item::Logical(b)),
                (found, _) => Err((
                    IOSTAT_BAD_VALUE,
                    format!(
                        "a kept record holds {} where a {} is read",
                        found.as_ref().map_or("no more values", kind_name),
                        kind_name(kind)
                    ),
                )),
            };
        }
        let token = self.next_token()?;
        let bad = || {
            (
                IOSTAT_BAD_VALUE,
                format!("bad {} `{token}` in list-directed input", kind_name(kind)),
            )
        };
        match kind {
            Item::Int(_, size) => token
                .parse::<i64>()
                .map(|v| Item::Int(v, *size))
                .map_err(|_| bad()),
            Item::Real(_, double) => parse_real(&token)
                .map(|v| Item::Real(v, *double))
                .ok_or_else(bad),
            Item::Logical(_) => {
                let t = token.trim_start_matches('.').to_ascii_lowercase();
                match t.chars().next() {
                    Some('t') => Ok(Item::Logical(true)),
                    Some('f') => Ok(Item::Logical(false)),
                    _ => Err(bad()),
                }
            }
            Item::Char(_) => Ok(Item::Char(token.into_bytes())),
        }
    }
    /// Ends the input statement (the rest of the record is skipped).
    pub fn end_read(&mut self) {
        self.resume();
        self.stmt.restore = None;
        self.stmt.tokens.clear();
        self.stmt.internal = false;
        self.stmt.fields = None;
        self.end();
    }

    fn next_token(&mut self) -> Result<String, Failure> {
        let end = || (IOSTAT_END, "end of file in list-directed input".to_string());
        loop {
            if let Some(t) = self.stmt.tokens.pop_front() {
                return Ok(t);
            }
            if self.stmt.internal {
                return Err(end());
            }
            let mut line = String::new();
            let n = self
                .channels
                .input
                .lock()
                .map_err(|_| {
                    (
                        IOSTAT_BAD_VALUE,
                        "the input channel is poisoned".to_string(),
                    )
                })?
                .read_line(&mut line)
                .map_err(|e| (IOSTAT_BAD_VALUE, format!("cannot read the input: {e}")))?;
            if n == 0 {
                return Err(end());
            }
            self.stmt.tokens = split_values(&line).map_err(|m| (IOSTAT_BAD_VALUE, m))?;
        }
    }
}

/// A value of the kind of `kind` that stands for nothing read (zero,
/// false, no characters).
fn zero(kind: &Item) -> Item {
    match kind {
        Item::Int(_, size) => Item::Int(0, *size),
        Item::Real(_, double) => Item::Real(0.0, *double),
        Item::Logical(_) => Item::Logical(false),
        Item::Char(_) => Item::Char(Vec::new()),
    }
}

/// The fields of a formatted internal input statement: the record and the
/// edit descriptors of its format, in order (groups and repeat counts
/// expanded), read one data field per item.
#[derive(Debug)]
struct FieldReader {
    /// The edit descriptors, expanded.
    edits: Vec<Edit>,
    /// The next edit descriptor.
    next: usize,
    /// The characters of the internal file.
    record: Vec<u8>,
    /// The position of the next field in the record.
    pos: usize,
}

impl FieldReader {
    fn new(format: &Format, record: &[u8]) -> FieldReader {
        let mut edits = Vec::new();
        // Fields past the end of the record read blanks; a few more than
        // the record has characters is enough for any statement that does
        // not end the file.
        let mut budget = record.len() + 2;
        expand(format, &mut edits, &mut budget);
        FieldReader {
            edits,
            next: 0,
            record: record.to_vec(),
            pos: 0,
        }
    }

    /// The next data field, read as the kind of `kind`.
    fn read(&mut self, kind: &Item) -> Result<Item, Failure> {
        let (edit, text) = loop {
            let Some(edit) = self.edits.get(self.next).cloned() else {
                return Err((
                    IOSTAT_END,
                    "end of file: the format ends the internal file's only record".into(),
                ));
            };
            self.next += 1;
            let width = match edit {
                Edit::X(n) => {
                    self.pos += n;
                    continue;
                }
                Edit::Slash => {
                    return Err((
                        IOSTAT_END,
                        "end of file: `/` in the format ends the internal file's only record"
                            .into(),
                    ))
                }
                Edit::P(_) | Edit::Colon | Edit::Lit(_) | Edit::Group(_) => continue,
                Edit::I(w, _)
                | Edit::F(w, _)
                | Edit::E(w, _, _, _)
                | Edit::G(w, _, _)
                | Edit::L(w) => w,
                Edit::A(w) => w.unwrap_or(0),
            };
            let start = self.pos.min(self.record.len());
            let end = if width == 0 {
                self.record.len()
            } else {
                (self.pos + width).min(self.record.len())
            };
            self.pos += if width == 0 { end - start } else { width };
            break (
                edit,
                String::from_utf8_lossy(&self.record[start..end]).into_owned(),
            );
        };
        let bad = || {
            (
                IOSTAT_BAD_VALUE,
                format!(
                    "bad {} `{}` in formatted input",
                    kind_name(kind),
                    text.trim()
                ),
            )
        };
        // Blanks are ignored (BLANK='NULL'); an empty field reads as zero.
        let packed: String = text.chars().filter(|c| *c != ' ').collect();
        match kind {
            Item::Int(_, size) if packed.is_empty() => Ok(Item::Int(0, *size)),
            Item::Int(_, size) => packed
                .parse::<i64>()
                .map(|v| Item::Int(v, *size))
                .map_err(|_| bad()),
            Item::Real(_, double) => {
                let decimals = match edit {
                    Edit::F(_, d) | Edit::E(_, d, _, _) | Edit::G(_, d, _) => d,
                    _ => 0,
                };
                read_real_field(&packed, decimals)
                    .map(|x| Item::Real(x, *double))
                    .ok_or_else(bad)
            }
            Item::Logical(_) => match packed.trim_start_matches('.').chars().next() {
                Some('t' | 'T') => Ok(Item::Logical(true)),
                Some('f' | 'F') => Ok(Item::Logical(false)),
                _ => Err(bad()),
            },
            Item::Char(_) => Ok(Item::Char(text.into_bytes())),
        }
    }
}

/// Appends the edit descriptors of `format` to `out`, groups and repeat
/// counts expanded, until `budget` data and X descriptors are out.
fn expand(format: &[(usize, Edit)], out: &mut Vec<Edit>, budget: &mut usize) {
    for (repeat, edit) in format {
        for _ in 0..*repeat {
            if *budget == 0 {
                return;
            }
            match edit {
                Edit::Group(inner) => expand(inner, out, budget),
                Edit::P(_) | Edit::Colon | Edit::Lit(_) | Edit::Slash => out.push(edit.clone()),
                _ => {
                    *budget -= 1;
                    out.push(edit.clone());
                }
            }
        }
    }
}

/// A real read under an F, E, D or G edit descriptor with `decimals`
/// digits after the point (blanks removed): without a decimal point, the
/// last `decimals` digits of the mantissa are the fraction (`12345` under
/// F7.3 is 12.345); the exponent is `e`, `d` or a sign after the mantissa.
fn read_real_field(field: &str, decimals: usize) -> Option<f64> {
    if field.is_empty() {
        return Some(0.0);
    }
    let split = field
        .char_indices()
        .skip(1)
        .find(|&(_, c)| matches!(c, 'e' | 'E' | 'd' | 'D' | 'q' | 'Q' | '+' | '-'))
        .map(|(i, _)| i);
    let (mantissa, exponent) = match split {
        Some(i) => (
            &field[..i],
            field[i..].trim_start_matches(['e', 'E', 'd', 'D', 'q', 'Q']),
        ),
        None => (field, ""),
    };
    let exponent: i32 = if exponent.is_empty() {
        0
    } else {
        exponent.parse().ok()?
    };
    let value = if mantissa.contains('.') {
        format!("{mantissa}e{exponent}")
    } else {
        if !mantissa
            .trim_start_matches(['+', '-'])
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            return parse_real(field);
        }
        let shift = exponent - i32::try_from(decimals).ok()?;
        format!("{mantissa}e{shift}")
    };
    value.parse::<f64>().ok()
}

fn kind_name(item: &Item) -> &'static str {
    match item {
        Item::Int(..) => "integer",
        Item::Real(..) => "real",
        Item::Logical(_) => "logical",
        Item::Char(_) => "character",
    }
}

/// The values of one list-directed input record: separated by commas or
/// blanks, `r*value` repeated, quoted strings with doubled quotes.
fn split_values(line: &str) -> Result<VecDeque<String>, String> {
    let mut out = VecDeque::new();
    let bytes: Vec<char> = line.trim_end_matches(['\n', '\r']).chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == ' ' || c == ',' || c == '\t' {
            i += 1;
            continue;
        }
        if c == '/' {
            return Err("`/` in list-directed input is not supported".into());
        }
        let mut value = String::new();
        if c == '\'' || c == '"' {
            i += 1;
            while i < bytes.len() {
                if bytes[i] == c {
                    if bytes.get(i + 1) == Some(&c) {
                        value.push(c);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                value.push(bytes[i]);
                i += 1;
            }
            out.push_back(value);
            continue;
        }
        while i < bytes.len() && !matches!(bytes[i], ' ' | ',' | '\t') {
            value.push(bytes[i]);
            i += 1;
        }
        match value.split_once('*') {
            Some((r, v)) if !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()) => {
                let r: usize = r
                    .parse()
                    .map_err(|_| format!("bad repeat count `{value}`"))?;
                if v.is_empty() {
                    return Err(
                        "null values (`r*`) in list-directed input are not supported".into(),
                    );
                }
                out.extend(std::iter::repeat_n(v.to_string(), r));
            }
            _ => out.push_back(value),
        }
    }
    Ok(out)
}

/// A Fortran real constant (`1.5`, `-2.`, `.5e1`, `1.5d0`, `3`).
fn parse_real(t: &str) -> Option<f64> {
    t.replace(['d', 'D'], "e").parse::<f64>().ok()
}

// ---------------------------------------------------------------------------
// List-directed output.

/// The record a list-directed output statement writes (with its newline):
/// a blank starts the record and separates every number and logical from
/// what precedes it, and a character item from a preceding non-character
/// item; integers take 11 columns (20 for 8-byte ones), reals gfortran's
/// G25.17E3 (REAL(8)) or G16.9E2 (REAL(4)) with one digit before the point
/// in the exponent form, logicals one column.
pub fn list_directed(items: &[Item]) -> String {
    let mut out = String::new();
    let mut prev_char = false;
    for item in items {
        match item {
            Item::Char(b) => {
                if !prev_char {
                    out.push(' ');
                }
                out.push_str(&String::from_utf8_lossy(b));
            }
            Item::Int(v, size) => {
                out.push(' ');
                right(&mut out, &v.to_string(), if *size == 8 { 20 } else { 11 });
            }
            Item::Logical(b) => {
                out.push(' ');
                out.push(if *b { 'T' } else { 'F' });
            }
            Item::Real(x, double) => {
                out.push(' ');
                let (w, d, e) = if *double { (25, 17, 3) } else { (16, 9, 2) };
                out.push_str(&general(*x, w, d, Some(e), 1, true));
            }
        }
        prev_char = matches!(item, Item::Char(_));
    }
    out.push('\n');
    out
}

/// Appends `s` right-justified in `w` columns (asterisks when it does not
/// fit); a width of 0 (`I0`, `F0.3`) is the minimal width, `s` itself.
fn right(out: &mut String, s: &str, w: usize) {
    if w == 0 {
        out.push_str(s);
    } else if s.len() > w {
        out.extend(std::iter::repeat_n('*', w));
    } else {
        out.extend(std::iter::repeat_n(' ', w - s.len()));
        out.push_str(s);
    }
}

// ---------------------------------------------------------------------------
// Number editing.

/// `|x|` rounded to `digits` significant digits: the digits and the
/// decimal exponent `k` with `x = 0.d1d2... * 10^k` (for zero, all zeros
/// and `k = 0`).
fn significant(x: f64, digits: usize) -> (String, i32) {
    if x == 0.0 {
        return ("0".repeat(digits.max(1)), 0);
    }
    let s = format!("{:.*e}", digits.max(1) - 1, x.abs());
    let (mantissa, exp) = s.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    (mantissa.replace('.', ""), exp + 1)
}

fn sign_of(x: f64) -> &'static str {
    if x.is_sign_negative() {
        "-"
    } else {
        ""
    }
}

/// Fw.d (with scale factor `p`: the value times 10^p).
fn fixed(x: f64, w: usize, d: usize, p: i32) -> String {
    if !x.is_finite() {
        return special(x, w);
    }
    let v = x.abs() * 10f64.powi(p);
    let mut s = format!("{v:.d$}");
    if d == 0 {
        s.push('.');
    }
    let sign = sign_of(x);
    // The leading zero goes when there is no room for it, and in the
    // minimal width (`F0.3`), as gfortran writes it.
    if s.starts_with("0.") && (w == 0 || sign.len() + s.len() > w) {
        s.remove(0);
    }
    let s = format!("{sign}{s}");
    let mut out = String::new();
    right(&mut out, &s, w);
    out
}

/// Infinity and NaN in a field of `w` columns.
fn special(x: f64, w: usize) -> String {
    let s = if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        if w >= 8 {
            "Infinity"
        } else {
            "Inf"
        }
    } else if w >= 9 {
        "-Infinity"
    } else {
        "-Inf"
    };
    let mut out = String::new();
    right(&mut out, s, w);
    out
}

/// The exponent part of E editing: `E+dd` (`+ddd` past 99) without `e`,
/// else `E` and a sign and `e` digits; `None` when it does not fit.
fn exponent(letter: char, k: i32, e: Option<usize>) -> Option<String> {
    let sign = if k < 0 { '-' } else { '+' };
    let a = k.unsigned_abs();
    match e {
        None if a <= 99 => Some(format!("{letter}{sign}{a:02}")),
        None if a <= 999 => Some(format!("{sign}{a:03}")),
        None => None,
        Some(e) => {
            let digits = format!("{a:0e$}");
            (digits.len() <= e).then(|| format!("{letter}{sign}{digits}"))
        }
    }
}

/// Ew.d[Ee] with scale factor `p` (ESw.d is `p = 1` in effect with `d + 1`
/// significant digits; Dw.d uses the letter D).
fn exp_form(x: f64, w: usize, d: usize, e: Option<usize>, p: i32, letter: char) -> String {
    if !x.is_finite() {
        return special(x, w);
    }
    let sig = if p > 0 {
        d + 1
    } else {
        (d as i32 + p).max(1) as usize
    };
    let (digits, k) = significant(x, sig);
    let exp = if x == 0.0 { 0 } else { k - p };
    let mantissa = if p > 0 {
        let p = p as usize;
        format!(
            "{}.{}",
            &digits[..p.min(digits.len())],
            &digits[p.min(digits.len())..]
        )
    } else {
        format!("0.{}{}", "0".repeat((-p) as usize), digits)
    };
    let Some(ex) = exponent(letter, exp, e) else {
        return "*".repeat(w);
    };
    let sign = sign_of(x);
    let mut m = mantissa;
    if m.starts_with("0.") && sign.len() + m.len() + ex.len() > w {
        m.remove(0);
    }
    let mut out = String::new();
    right(&mut out, &format!("{sign}{m}{ex}"), w);
    out
}

/// Gw.d[Ee] for a real: F editing followed by blanks when the value
/// rounded to `d` digits lies in [0.1, 10^d) (or is zero), else E editing
/// with scale factor `p`; `list` selects list-directed output's form (one
/// digit before the point in the exponent form).
fn general(x: f64, w: usize, d: usize, e: Option<usize>, p: i32, list: bool) -> String {
    if !x.is_finite() {
        return special(x, w);
    }
    let n = e.map_or(4, |e| e + 2);
    let (_, k) = significant(x, d);
    let fixed_form = x == 0.0 || (0..=d as i32).contains(&k);
    if !fixed_form {
        return if list {
            exp_form(x, w, d - 1, e, 1, 'E')
        } else {
            exp_form(x, w, d, e, p, 'E')
        };
    }
    let decimals = if x == 0.0 { d - 1 } else { d - k as usize };
    let mut s = fixed(x, w.saturating_sub(n), decimals, 0);
    if list && s.starts_with('*') {
        s = exp_form(x, w - n, d - 1, e, 1, 'E');
    }
    s.push_str(&" ".repeat(n));
    s
}

// ---------------------------------------------------------------------------
// Format specifications.

/// One edit descriptor of a format specification.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// Iw[.m].
    I(usize, Option<usize>),
    /// Fw.d.
    F(usize, usize),
    /// Ew.d[Ee], Dw.d (letter D) and ESw.d (letter S).
    E(usize, usize, Option<usize>, char),
    /// Gw.d[Ee].
    G(usize, usize, Option<usize>),
    /// A[w].
    A(Option<usize>),
    /// Lw.
    L(usize),
    /// nX.
    X(usize),
    /// kP.
    P(i32),
    /// `/`: ends the record.
    Slash,
    /// `:`: stops when no item is left.
    Colon,
    /// A character literal.
    Lit(Vec<u8>),
    /// r(...).
    Group(Vec<(usize, Edit)>),
}

impl Edit {
    fn takes_item(&self) -> bool {
        matches!(
            self,
            Edit::I(..) | Edit::F(..) | Edit::E(..) | Edit::G(..) | Edit::A(_) | Edit::L(_)
        )
    }
}

/// A parsed format specification: the repeated descriptors inside its
/// outer parentheses.
pub type Format = Vec<(usize, Edit)>;

/// Parses a format specification (`(i5, 2(1x, f8.3) / 'text')`: the text of
/// a FORMAT statement after the keyword or a format literal). Blanks are
/// insignificant outside literals; letters may be of either case.
pub fn parse_format(text: &[u8]) -> Result<Format, String> {
    let mut p = FormatParser { s: text, i: 0 };
    p.blanks();
    if p.peek() != Some(b'(') {
        return Err("a format specification starts with `(`".into());
    }
    p.i += 1;
    let f = p.list()?;
    p.blanks();
    if p.i != text.len() {
        return Err(format!(
            "unexpected `{}` after the format specification",
            String::from_utf8_lossy(&text[p.i..])
        ));
    }
    Ok(f)
}

struct FormatParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl FormatParser<'_> {
    fn blanks(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.blanks();
        self.s.get(self.i).map(u8::to_ascii_lowercase)
    }
    fn number(&mut self) -> Option<usize> {
        self.blanks();
        let start = self.i;
        let mut v: usize = 0;
        while let Some(c) = self.s.get(self.i).filter(|c| c.is_ascii_digit()) {
            v = v.saturating_mul(10).saturating_add((c - b'0') as usize);
            self.i += 1;
            self.blanks();
        }
        (self.i > start).then_some(v)
    }
    /// Descriptors up to the closing parenthesis (consumed).
    fn list(&mut self) -> Result<Format, String> {
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err("missing `)` in the format specification".into()),
                Some(b')') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b',') => self.i += 1,
                Some(_) => out.push(self.item()?),
            }
        }
    }
    fn item(&mut self) -> Result<(usize, Edit), String> {
        // A sign starts a scale factor.
        let negative = if self.peek() == Some(b'-') {
            self.i += 1;
            true
        } else {
            if self.peek() == Some(b'+') {
                self.i += 1;
            }
            false
        };
        let count = self.number();
        let c = self
            .peek()
            .ok_or("missing `)` in the format specification")?;
        self.i += 1;
        let need = |v: Option<usize>, what: &str| {
            v.ok_or_else(|| format!("`{what}` needs a width in the format specification"))
        };
        let edit = match c {
            b'(' => Edit::Group(self.list()?),
            b'\'' | b'"' => {
                let mut lit = Vec::new();
                loop {
                    match self.s.get(self.i) {
                        None => return Err("unterminated literal in the format".into()),
                        Some(&q) if q == c => {
                            if self.s.get(self.i + 1) == Some(&c) {
                                lit.push(c);
                                self.i += 2;
                            } else {
                                self.i += 1;
                                break;
                            }
                        }
                        Some(&b) => {
                            lit.push(b);
                            self.i += 1;
                        }
                    }
                }
                Edit::Lit(lit)
            }
            b'/' => Edit::Slash,
            b':' => Edit::Colon,
            b'x' => return Ok((1, Edit::X(count.unwrap_or(1)))),
            b'p' => {
                let k = count.unwrap_or(0) as i32;
                return Ok((1, Edit::P(if negative { -k } else { k })));
            }
            b'h' => {
                return Err(
                    "Hollerith edit descriptors (nH) are not supported: use a quoted literal"
                        .into(),
                )
            }
            b'i' => {
                let w = need(self.number(), "I")?;
                Edit::I(w, self.dot()?)
            }
            b'f' => {
                let w = need(self.number(), "F")?;
                Edit::F(w, self.dot()?.ok_or("`F` needs `.d`")?)
            }
            b'e' | b'd' | b'g' => {
                let letter = if c == b'e' && self.peek() == Some(b's') {
                    self.i += 1;
                    'S'
                } else if c == b'e' && self.peek() == Some(b'n') {
                    return Err("EN editing is not supported".into());
                } else {
                    (c as char).to_ascii_uppercase()
                };
                let w = need(self.number(), "E")?;
                let d = self.dot()?.ok_or("`E`, `D` and `G` need `.d`")?;
                let e = if letter != 'D' && self.peek() == Some(b'e') {
                    self.i += 1;
                    Some(self.number().ok_or("`Ee` needs digits")?)
                } else {
                    None
                };
                if letter == 'G' {
                    Edit::G(w, d, e)
                } else {
                    Edit::E(w, d, e, letter)
                }
            }
            b'a' => Edit::A(self.number()),
            b'l' => Edit::L(need(self.number(), "L")?),
            other => {
                return Err(format!(
                    "unsupported edit descriptor `{}` in the format",
                    other as char
                ))
            }
        };
        Ok((count.unwrap_or(1), edit))
    }
    fn dot(&mut self) -> Result<Option<usize>, String> {
        if self.peek() == Some(b'.') {
            self.i += 1;
            return self
                .number()
                .map(Some)
                .ok_or_else(|| "a digit must follow `.` in the format".to_string());
        }
        Ok(None)
    }
}

/// Runs a format over the items: the records written (each ending in a
/// newline).
pub fn formatted(format: &Format, items: &[Item]) -> Result<String, String> {
    let mut run = Run {
        items,
        next: 0,
        out: String::new(),
        record: String::new(),
        pending: 0,
        scale: 0,
    };
    // The part reversion restarts at: the last top-level group (with its
    // repeat count), else the whole format.
    let revert_at = format
        .iter()
        .rposition(|(_, e)| matches!(e, Edit::Group(_)))
        .unwrap_or(0);
    let mut part: &[(usize, Edit)] = format;
    loop {
        let before = run.next;
        if let Flow::Stop = run.list(part)? {
            break;
        }
        if run.next >= items.len() {
            break;
        }
        if run.next == before {
            return Err("the format has no data edit descriptor for the items".into());
        }
        run.end_record();
        part = &format[revert_at..];
    }
    run.end_record();
    Ok(run.out)
}

enum Flow {
    Go,
    Stop,
}

struct Run<'a> {
    items: &'a [Item],
    next: usize,
    out: String,
    record: String,
    /// Blanks of X editing not yet written: they appear only when
    /// something follows in the record.
    pending: usize,
    scale: i32,
}

impl Run<'_> {
    fn end_record(&mut self) {
        self.out.push_str(&self.record);
        self.out.push('\n');
        self.record.clear();
        self.pending = 0;
    }
    fn write(&mut self, text: &str) {
        self.record.extend(std::iter::repeat_n(' ', self.pending));
        self.pending = 0;
        self.record.push_str(text);
    }
    fn list(&mut self, list: &[(usize, Edit)]) -> Result<Flow, String> {
        for (count, edit) in list {
            for _ in 0..*count {
                if let Flow::Stop = self.edit(edit)? {
                    return Ok(Flow::Stop);
                }
            }
        }
        Ok(Flow::Go)
    }
    fn edit(&mut self, edit: &Edit) -> Result<Flow, String> {
        if edit.takes_item() && self.next >= self.items.len() {
            return Ok(Flow::Stop);
        }
        match edit {
            Edit::Group(inner) => return self.list(inner),
            Edit::Lit(b) => self.write(&String::from_utf8_lossy(b)),
            Edit::X(n) => self.pending += n,
            Edit::Slash => self.end_record(),
            Edit::Colon if self.next >= self.items.len() => return Ok(Flow::Stop),
            Edit::Colon => {}
            Edit::P(k) => self.scale = *k,
            data => {
                let item = &self.items[self.next];
                self.next += 1;
                let text = self.data(data, item).map_err(|got| {
                    format!(
                        "item {} of the output is {got}, which the format edits with {}",
                        self.next,
                        descriptor_name(data)
                    )
                })?;
                self.write(&text);
            }
        }
        Ok(Flow::Go)
    }
    /// One data edit descriptor applied to an item (`Err`: the item's kind
    /// when the descriptor does not apply to it).
    fn data(&self, edit: &Edit, item: &Item) -> Result<String, &'static str> {
        let p = self.scale;
        Ok(match (edit, item) {
            (Edit::I(w, m), Item::Int(v, _)) => int_field(*v, *w, *m),
            (Edit::G(w, _, _), Item::Int(v, _)) => int_field(*v, *w, None),
            (Edit::F(w, d), Item::Real(x, _)) => fixed(*x, *w, *d, p),
            (Edit::E(w, d, e, 'S'), Item::Real(x, _)) => exp_form(*x, *w, *d, *e, 1, 'E'),
            (Edit::E(w, d, e, letter), Item::Real(x, _)) => exp_form(*x, *w, *d, *e, p, *letter),
            (Edit::G(w, d, e), Item::Real(x, _)) => general(*x, *w, *d, *e, p, false),
            (Edit::L(w), Item::Logical(b)) | (Edit::G(w, _, _), Item::Logical(b)) => {
                let mut out = String::new();
                right(&mut out, if *b { "T" } else { "F" }, *w);
                out
            }
            (Edit::A(w), Item::Char(b)) => char_field(b, *w),
            (Edit::G(w, _, _), Item::Char(b)) => char_field(b, Some(*w)),
            (_, item) => return Err(kind_name(item)),
        })
    }
}

/// Iw[.m]: at least `m` digits, right-justified (blank for `.0` and 0).
fn int_field(v: i64, w: usize, m: Option<usize>) -> String {
    if m == Some(0) && v == 0 {
        return " ".repeat(w);
    }
    let digits = format!("{:0width$}", v.unsigned_abs(), width = m.unwrap_or(1));
    let s = if v < 0 { format!("-{digits}") } else { digits };
    let mut out = String::new();
    right(&mut out, &s, w);
    out
}

/// A[w]: the whole item, or its first `w` characters, or right-justified
/// in `w` columns.
fn char_field(b: &[u8], w: Option<usize>) -> String {
    let s = String::from_utf8_lossy(b);
    match w {
        None => s.into_owned(),
        Some(w) if w >= b.len() => format!("{}{s}", " ".repeat(w - b.len())),
        Some(w) => String::from_utf8_lossy(&b[..w]).into_owned(),
    }
}

fn descriptor_name(edit: &Edit) -> &'static str {
    match edit {
        Edit::I(..) => "I",
        Edit::F(..) => "F",
        Edit::E(_, _, _, 'D') => "D",
        Edit::E(_, _, _, 'S') => "ES",
        Edit::E(..) => "E",
        Edit::G(..) => "G",
        Edit::A(_) => "A",
        Edit::L(_) => "L",
        _ => "a control edit descriptor",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_directed_output_is_gfortrans() {
        // gfortran 13: print *, 1.5d0, 0.1d0, 1d-5, 3, 'ab', 'c', .true.
        let items = [
            Item::Real(1.5, true),
            Item::Real(0.1, true),
            Item::Real(1e-5, true),
            Item::Int(3, 4),
            Item::Char(b"ab".to_vec()),
            Item::Char(b"c".to_vec()),
            Item::Logical(true),
        ];
        assert_eq!(
            list_directed(&items),
            concat!(
                "   1.5000000000000000       0.10000000000000001        1.0000000000000001E-005",
                "           3 abc T\n"
            )
        );
        assert_eq!(
            list_directed(&[Item::Real(1.5, false), Item::Real(1e9, false)]),
            "   1.50000000       1.00000000E+09\n"
        );
    }

    #[test]
    fn formats_edit_like_gfortran() {
        let x = 1.0 / 3.0;
        let f = parse_format(b"(f10.4, e12.4, es12.4, d12.4, g12.4, i5, a, a5, 2x, a2)").unwrap();
        let items = [
            Item::Real(x, true),
            Item::Real(x, true),
            Item::Real(x, true),
            Item::Real(x, true),
            Item::Real(x, true),
            Item::Int(42, 4),
            Item::Char(b"hi".to_vec()),
            Item::Char(b"abc".to_vec()),
            Item::Char(b"xyz".to_vec()),
        ];
        assert_eq!(
            formatted(&f, &items).unwrap(),
            "    0.3333  0.3333E+00  3.3333E-01  0.3333D+00  0.3333       42hi  abc  xy\n"
        );
        let f = parse_format(b"(' n=', 2i3 / ' next', i4)").unwrap();
        let items: Vec<Item> = (1..=5).map(|i| Item::Int(i, 4)).collect();
        assert_eq!(
            formatted(&f, &items).unwrap(),
            " n=  1  2\n next   3\n n=  4  5\n next\n"
        );
        let f = parse_format(b"(e10.3, e12.3e3, 1pe12.4, f8.3)").unwrap();
        let items = [12.345, 1e200, 12.345, 2.5].map(|v| Item::Real(v, true));
        assert_eq!(
            formatted(&f, &items).unwrap(),
            " 0.123E+02  0.100E+201  1.2345E+01  25.000\n"
        );
        let f = parse_format(b"(f5.2, f3.2, f4.1, f6.0, i2)").unwrap();
        let mut items: Vec<Item> = [0.5, 0.5, -0.04, 12.5]
            .iter()
            .map(|&v| Item::Real(v, true))
            .collect();
        items.push(Item::Int(123, 4));
        assert_eq!(formatted(&f, &items).unwrap(), " 0.50.50-0.0   12.**\n");
        let f = parse_format(b"(g14.6)").unwrap();
        let items = [0.0, 1e5, 1e6, 0.01].map(|v| Item::Real(v, true));
        assert_eq!(
            formatted(&f, &items).unwrap(),
            "   0.00000    \n   100000.    \n  0.100000E+07\n  0.100000E-01\n"
        );
        // Reversion to the last group; trailing X editing writes nothing.
        let f = parse_format(b"(3(1x,f6.2))").unwrap();
        let items: Vec<Item> = (1..=4).map(|i| Item::Real(0.5 * i as f64, true)).collect();
        assert_eq!(
            formatted(&f, &items).unwrap(),
            "   0.50   1.00   1.50\n   2.00\n"
        );
        // Width 0: the minimal width (gfortran: `n=8 t=2.750 m=-12`).
        let f = parse_format(b"(a,i0,a,f0.3,a,i0)").unwrap();
        let items = [
            Item::Char(b"n=".to_vec()),
            Item::Int(8, 4),
            Item::Char(b" t=".to_vec()),
            Item::Real(2.75, true),
            Item::Char(b" m=".to_vec()),
            Item::Int(-12, 4),
        ];
        assert_eq!(formatted(&f, &items).unwrap(), "n=8 t=2.750 m=-12\n");
        let f = parse_format(b"(f0.3)").unwrap();
        assert_eq!(formatted(&f, &[Item::Real(0.5, true)]).unwrap(), ".500\n");
        assert!(formatted(&parse_format(b"(i5)").unwrap(), &[Item::Real(1.0, true)]).is_err());
        assert!(parse_format(b"(5hhello)").is_err());
    }

    #[test]
    fn list_directed_input_splits_values() {
        let v = split_values("1, 2.5d0  'it''s' 3*7\n").unwrap();
        assert_eq!(v, ["1", "2.5d0", "it's", "7", "7", "7"]);
        assert_eq!(parse_real("2.5d0"), Some(2.5));
    }
}
