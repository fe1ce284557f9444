//! Runtime errors reported by generated code and by the interpreter.
//!
//! It describes errors; raising them is the interpreter's and the JIT
//! runtime's work.

use crate::ir::{ProcId, RuntimeErrorKind, Span};
use std::fmt;

/// A runtime error: what went wrong, in which procedure, at which source
/// position, and on which variable.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    /// What went wrong.
    pub kind: RuntimeErrorKind,
    /// The procedure executing.
    pub proc: ProcId,
    /// The source position of the failing instruction (default when unknown).
    pub span: Span,
    /// The variable involved (array indexed, argument too small), if any.
    pub var: Option<String>,
    /// Extra detail, such as `index 11 outside 1:10 in dimension 1`.
    pub detail: String,
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(v) = &self.var {
            write!(f, " on `{v}`")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for RuntimeError {}
