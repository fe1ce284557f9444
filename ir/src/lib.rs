//! `adjit-ir`: the code-list IR of adjit, the tools that make and check it
//! (builder, verifier, printer, shape evaluation) and the reference
//! interpreter, the executable definition of what every instruction means.
//!
//! This crate knows about code lists only: nothing of Fortran, of
//! derivatives or of code generation. The front end and the AD transforms in
//! the `adjit` crate produce and rewrite [`Module`]s; the `adjit-jit` crate
//! compiles them and must agree with [`interp`].
//!
//! The IR types live at the crate root (defined in the private `ir` module);
//! start reading there: its documentation says what every instruction means.

mod ir;

pub mod buffer;
pub mod builder;
pub mod chars;
pub mod error;
pub mod interp;
pub mod io;
pub mod print;
pub mod shape;
pub mod special;
pub mod verify;

pub use buffer::Buffer;
pub use error::RuntimeError;
pub use ir::*;
