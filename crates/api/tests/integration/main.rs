//! Integration tests: the real app, driven through its HTTP interface in-process.

mod catalogue;
mod errors;
mod ops;
mod paywall;
mod predmkt;
mod robustness;
mod social;
mod support;
mod upstream;
mod validation;
mod walk;
