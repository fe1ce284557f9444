//! Code shared by the integration tests: a random generator of well-formed
//! IR programs, a harness running them through the interpreter and the JIT,
//! and a reducer for disagreements; a random generator of Fortran programs
//! and the differential derivative check over them.
#![allow(dead_code)]

pub mod compare;
pub mod differential;
pub mod random_fortran;
pub mod random_ir;
pub mod reduce;
