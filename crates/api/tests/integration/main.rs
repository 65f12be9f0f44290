//! Integration tests: the real app, driven through its HTTP interface in-process.

mod account;
mod agentbox;
mod catalogue;
mod chaindata;
mod connections;
mod credits;
mod defi;
mod errors;
mod hostile;
mod llm;
mod mcp;
mod ops;
mod paywall;
mod perps;
mod predmkt;
mod preview;
mod rate;
mod robustness;
mod sellers;
mod signals;
mod social;
mod support;
mod telegram;
mod upstream;
mod validation;
mod walk;
