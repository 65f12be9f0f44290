//! The perp exchange: read-only `/info` requests and `/exchange` actions that svc builds and
//! signs with its own agent key.

pub mod sign;
