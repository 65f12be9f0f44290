//! The paywall as a service: [`Paywall::charge`] and the rest of its public face, driven with
//! payments signed by real keys, against the real store (a SQLite file, and PostgreSQL when
//! `TEST_DATABASE_URL` is set) and the built-in facilitator. The only fakes are at the
//! network edge: a node double behind each chain the facilitator talks to.
//!
//! Every test is written once as an `async fn(Store)` and declared with [`on_both!`].

mod charge;
mod concurrency;
mod support;
