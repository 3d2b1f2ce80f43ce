//! Qdrant's failures, as the vector port reports them: unavailable, or refused.

use qdrant_client::QdrantError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server could not be reached, or did not answer in time.
    #[error("Qdrant at {url} is unreachable: {message}")]
    Unreachable { url: String, message: String },

    /// What answered does not speak gRPC: most often Qdrant's REST port.
    #[error(
        "{url} did not answer in gRPC: Octopus speaks to Qdrant's gRPC port (6334 unless configured otherwise), not its REST port (6333)"
    )]
    NotGrpc { url: String },

    /// The server answered with an error.
    #[error("Qdrant refused a request: {0}")]
    Refused(String),

    /// The server runs a version this client does not support.
    #[error("Qdrant at {url} runs version {found}; Octopus needs {needed} or later")]
    Unsupported {
        url: String,
        found: String,
        needed: &'static str,
    },

    /// A point came back without what Octopus stores in every point.
    #[error("Qdrant point without a valid {0}")]
    Malformed(&'static str),
}

impl Error {
    /// Sorts a client error: transport failures and timeouts mean the server
    /// is out of reach (worth retrying later); anything else was refused.
    pub(crate) fn from_client(url: &str, error: QdrantError) -> Self {
        use tonic::Code;
        match &error {
            // The client reports a refused connection as an internal error
            // of its own ("Failed to connect to …"), not as `Unavailable`.
            QdrantError::ResponseError { status }
                if matches!(
                    status.code(),
                    Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown
                ) || (status.code() == Code::Internal
                    && status.message().starts_with("Failed to connect")) =>
            {
                Error::Unreachable {
                    url: url.to_owned(),
                    message: status.message().to_owned(),
                }
            }
            QdrantError::ResourceExhaustedError { .. } | QdrantError::Io(_) => Error::Unreachable {
                url: url.to_owned(),
                message: error.to_string(),
            },
            _ => Error::Refused(error.to_string()),
        }
    }

    pub fn is_unreachable(&self) -> bool {
        matches!(self, Error::Unreachable { .. })
    }
}

impl From<Error> for octopus_core::Error {
    fn from(error: Error) -> Self {
        match error {
            Error::Unreachable { .. } => octopus_core::Error::unavailable("qdrant", error),
            other => octopus_core::Error::backend(other),
        }
    }
}
