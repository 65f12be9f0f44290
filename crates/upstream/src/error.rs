//! What can go wrong calling a vendor.

use crate::Vendor;

/// A failed vendor call. Messages name the vendor family and the kind of failure, never a
/// key, a full URL with credentials or the vendor's body.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// No answer within the vendor's timeout (504 to the client).
    #[error("{vendor} did not answer in time")]
    Timeout {
        /// Who timed out.
        vendor: Vendor,
    },
    /// The vendor answered with an error status after any retries (502).
    #[error("{vendor} answered HTTP {status}")]
    Status {
        /// Who answered.
        vendor: Vendor,
        /// The last status seen.
        status: u16,
    },
    /// The vendor could not be reached (502).
    #[error("{vendor} unreachable: {cause}")]
    Transport {
        /// Who was unreachable.
        vendor: Vendor,
        /// The transport error, with the URL stripped.
        cause: String,
    },
    /// A JSON-RPC node answered with an error object instead of a result (502); nodes send
    /// these with HTTP 200. Only the code is kept, never the node's message.
    #[error("{vendor} answered JSON-RPC error {code}")]
    Rpc {
        /// Who answered.
        vendor: Vendor,
        /// The JSON-RPC error code.
        code: i64,
    },
    /// The vendor answered 200 with a body that does not have its documented shape (502).
    #[error("{vendor} answered in an unexpected shape: {cause}")]
    Decode {
        /// Who answered.
        vendor: Vendor,
        /// The decoder's message (field path and expectation, no body).
        cause: String,
    },
    /// The vendor has no such object: the client asked for something that does not exist
    /// (404 to the client, nothing charged).
    #[error("{vendor} has no {what} {id}")]
    NotFound {
        /// Who was asked.
        vendor: Vendor,
        /// What kind of object.
        what: &'static str,
        /// The identifier asked for.
        id: String,
    },
    /// The vendor refused svc's own credentials or signature (502): a configuration or
    /// signing fault on svc's side, never the client's.
    #[error("{vendor} refused svc's credentials: {cause}")]
    Refused {
        /// Who refused.
        vendor: Vendor,
        /// The vendor's reason (its short message, never a body or a key).
        cause: String,
    },
    /// The vendor refused a value the client chose (a search query it cannot parse, a stale
    /// page token): the client's to fix (422 to the client, nothing charged).
    #[error("{vendor} refused the {field}: {reason}")]
    BadInput {
        /// Who refused.
        vendor: Vendor,
        /// The input field at fault.
        field: &'static str,
        /// What to fix, in svc's words (never the vendor's body).
        reason: &'static str,
    },
    /// An amount in the request body that the token's decimals cannot express: the client's
    /// to fix (422 to the client, nothing charged).
    #[error("{field}: {error}")]
    BadAmount {
        /// The body field at fault.
        field: &'static str,
        /// Why it has no atomic form.
        error: crate::units::AmountError,
    },
    /// A setting that cannot work (bad base URL or key characters); raised at start.
    #[error("{vendor} is misconfigured: {cause}")]
    Config {
        /// Whose setting.
        vendor: Vendor,
        /// What is wrong.
        cause: String,
    },
}

impl UpstreamError {
    /// The vendor the error is about.
    pub fn vendor(&self) -> Vendor {
        match self {
            UpstreamError::Timeout { vendor }
            | UpstreamError::Status { vendor, .. }
            | UpstreamError::Transport { vendor, .. }
            | UpstreamError::Decode { vendor, .. }
            | UpstreamError::Rpc { vendor, .. }
            | UpstreamError::NotFound { vendor, .. }
            | UpstreamError::Refused { vendor, .. }
            | UpstreamError::BadInput { vendor, .. }
            | UpstreamError::Config { vendor, .. } => *vendor,
            // Refused before the router was asked to do anything with it.
            UpstreamError::BadAmount { .. } => Vendor::Enso,
        }
    }

    /// A short label for the error metric.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            UpstreamError::Timeout { .. } => "timeout",
            UpstreamError::Status { .. } => "status",
            UpstreamError::Transport { .. } => "transport",
            UpstreamError::Decode { .. } => "decode",
            UpstreamError::Rpc { .. } => "rpc",
            UpstreamError::NotFound { .. } => "not_found",
            UpstreamError::Refused { .. } => "refused",
            UpstreamError::BadInput { .. } | UpstreamError::BadAmount { .. } => "bad_input",
            UpstreamError::Config { .. } => "config",
        }
    }
}
