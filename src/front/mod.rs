//! The Fortran front end: source forms, lexer, parser, semantic analysis and
//! lowering to the code-list IR, with source spans and diagnostics.
//!
//! It owns everything that knows Fortran and produces [`adjit_ir::Module`]s;
//! it knows nothing of derivatives ([`crate::ad`]), code generation or the
//! public API above it.

pub mod ast;
pub mod diag;
pub mod entry;
pub mod lexer;
pub mod parser;
pub mod sema;
pub mod source;
