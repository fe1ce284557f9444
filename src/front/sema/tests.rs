//! Unit tests of semantic analysis and lowering.
