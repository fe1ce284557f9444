//! adjit: a JIT-compiling differentiating engine for Fortran subroutines.
//!
//! This crate owns the Fortran front end ([`front`]), the derivative
//! transforms ([`ad`]) and the public API over them ([`engine`]); the IR it
//! produces and rewrites is [`ir`] (crate `adjit-ir`) and the compiler that
//! runs it is [`jit`] (crate `adjit-jit`), both re-exported, and so is
//! [`fortran`] (crate `adjit-fortran`), which writes derivative code lists as
//! Fortran source. It knows nothing
//! of the command line (the `adjit` binary, `src/cli/`) or of the gfortran
//! test oracle (`tests/oracle/`). ARCHITECTURE.md draws the layers.

pub mod ad;
pub mod engine;
pub mod front;
#[cfg(feature = "argmin")]
pub mod optim;
pub mod timing;

pub use adjit_fortran as fortran;
pub use adjit_ir as ir;
pub use adjit_jit as jit;
