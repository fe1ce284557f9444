//! Automatic differentiation of code lists: activity analysis, the tangent
//! (forward) transform and the adjoint (reverse) transform.

pub mod activity;
pub mod adjoint;
pub mod tangent;
