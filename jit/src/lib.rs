//! `adjit-jit`: the code-list IR, its tools (builder, printer, verifier), its
//! Cranelift lowering and the runtime that generated code calls.
//!
//! This crate knows nothing of Fortran and nothing of derivatives: the front
//! end and the AD transforms in the `adjit` crate produce [`ir::Module`]s, and
//! this crate checks, prints and compiles whatever module it is given.

pub mod buffer;
pub mod builder;
pub mod codegen;
pub mod error;
pub mod globals;
pub mod ir;
pub mod libm;
pub mod opt;
pub mod print;
pub mod runtime;
pub mod shape;
pub mod stack;
pub mod verify;

pub use buffer::Buffer;
pub use error::RuntimeError;
