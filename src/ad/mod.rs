//! Automatic differentiation of code lists: activity analysis, the tangent
//! (forward) transform and the adjoint (reverse) transform.
//!
//! It owns the rewriting of IR into derivative IR and knows the IR only:
//! nothing of Fortran (the front end), of code generation (the jit crate
//! compiles what this module produces) or of the public API.
//!
//! * [`rules`] holds the local partial derivatives of every IR operation, in
//!   one place shared by both transforms.
//! * [`activity`] decides which variables and values carry derivatives.
//! * [`tangent`] and [`adjoint`] generate the derivative procedures.
//! * [`checkpoint`] holds the binomial (revolve) schedule and the outlining
//!   of loops marked `!$AD BINOMIAL-CKP` that the adjoint reverses by it.
//!
//! Second order comes from applying the transforms to their own output
//! (tangent over adjoint, tangent over tangent): derivative code is a
//! code list like any other. When the code differentiated uses the
//! runtime value stack (an adjoint's sweeps), [`activity`] tracks the stack
//! as a storage location and [`tangent`] carries tangents on it beside the
//! values.
//!
//! This module also owns [`AdError`], the error every transform returns.

pub mod activity;
pub mod adjoint;
pub mod checkpoint;
pub mod rules;
pub mod tangent;

use adjit_ir::Span;
use std::fmt;

/// Why a derivative could not be generated.
#[derive(Clone, Debug, PartialEq)]
pub enum AdError {
    /// A procedure handle outside the module.
    UnknownProc(u32),
    /// A variable handle outside the procedure, or a variable that cannot be
    /// an independent / dependent (not a floating-point parameter or global).
    BadVariable {
        /// The procedure.
        proc: String,
        /// The variable's name (or handle when out of range).
        var: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An option out of range.
    BadOption(String),
    /// The input module does not verify (first violation).
    InvalidIr(String),
    /// The procedure uses a construct the transform does not differentiate.
    Unsupported {
        /// The procedure.
        proc: String,
        /// What is not supported.
        what: String,
        /// Where it is in the source.
        span: Span,
    },
}

impl fmt::Display for AdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdError::UnknownProc(p) => write!(f, "no procedure with handle proc{p}"),
            AdError::BadVariable { proc, var, reason } => {
                write!(f, "in `{proc}`: variable `{var}` {reason}")
            }
            AdError::BadOption(m) => write!(f, "bad option: {m}"),
            AdError::InvalidIr(m) => write!(f, "invalid IR: {m}"),
            AdError::Unsupported { proc, what, .. } => {
                write!(f, "in `{proc}`: cannot differentiate {what}")
            }
        }
    }
}

impl std::error::Error for AdError {}
