//! The Fortran front end: source forms, lexer, parser, semantic analysis.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod parser;
pub mod sema;
pub mod source;
