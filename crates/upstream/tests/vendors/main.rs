//! Every vendor adapter against its recorded wire format (the fixtures) and against the
//! simulator's fake of that vendor: one test binary, one shared set-up.

mod support;

mod chaindata;
mod defi;
mod launchpad;
mod perps;
mod predmkt;
mod shield;
mod social;
mod solana_rpc;
mod swap;
