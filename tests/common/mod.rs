//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod check;
pub mod cli;
pub mod corpus;
pub mod scalar;
