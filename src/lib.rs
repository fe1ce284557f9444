//! adjit: a JIT-compiling differentiating engine for Fortran subroutines.

pub mod ad;
pub mod engine;
pub mod front;
pub mod timing;

pub use adjit_ir as ir;
pub use adjit_jit as jit;
