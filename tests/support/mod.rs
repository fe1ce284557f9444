//! Code shared by the integration tests: a random generator of well-formed
//! IR programs, a harness running them through the interpreter and the JIT,
//! and a reducer for disagreements.
#![allow(dead_code)]

pub mod compare;
pub mod random_ir;
pub mod reduce;
