//! Lowering from the typed AST to code lists. The work is done together
//! with semantic analysis in [`crate::front::sema`]; this module re-exports
//! its entry points under the pipeline's name.

pub use crate::front::sema::{compile, Compiled};
