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
        let storage = self.var.as_deref().and_then(component_of_storage);
        match (&self.var, &storage) {
            (_, Some(c)) => write!(f, " on `{c}`")?,
            (Some(v), None) => write!(f, " on `{v}`")?,
            (None, None) => {}
        }
        if storage.is_some() && self.detail.starts_with("index 0 outside") {
            // Storage position 0 is where a subscript outside the
            // element's own bounds is sent.
            write!(
                f,
                ": a subscript outside the bounds of the element's allocation (storage {})",
                self.detail
            )?;
        } else if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// The component `b(k)%u` an error on the storage leaf `b%u.data` of an
/// ALLOCATABLE component of an array of structures names (the front end
/// stores each element's allocation in a column of that leaf, at positions
/// from 1); `None` for another variable.
fn component_of_storage(var: &str) -> Option<String> {
    let (array, component) = var.strip_suffix(".data")?.split_once('%')?;
    Some(format!("{array}(k)%{component}"))
}

impl std::error::Error for RuntimeError {}
