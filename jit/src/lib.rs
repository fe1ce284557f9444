//! `adjit-jit`: compiles code-list IR ([`adjit_ir`]) to native functions with
//! Cranelift, and owns the runtime that generated code calls (stacks / tapes,
//! spill to disk, error reporting, argument marshalling).
//!
//! This crate knows the IR and nothing above it: nothing of Fortran and
//! nothing of derivatives. The front end and the AD transforms in the `adjit`
//! crate produce [`adjit_ir::Module`]s, and this crate compiles whatever
//! verified module it is given, with the meaning the reference interpreter
//! ([`adjit_ir::interp`]) defines.

// The IR this crate compiles, under the short name its modules use
// (`crate::ir::Inst`, `crate::ir::shape`, ...).
use adjit_ir as ir;

pub mod codegen;
pub mod globals;
pub mod libm;
pub mod opt;
pub mod parallel;
pub mod runtime;
pub mod runtime_timer;
pub mod stack;
