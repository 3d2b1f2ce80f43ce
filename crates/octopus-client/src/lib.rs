//! A client of Octopus's HTTP API, for Rust programs: the command line,
//! the benchmarks and the soak test speak to a server through it.
//!
//! - [`operations`]: every operation the server serves, generated from its
//!   OpenAPI document (a test of the server writes the file and fails when
//!   it differs), so that no caller spells a method or a path;
//! - [`Client`]: a server's URL and an API key; [`Client::call`] starts a
//!   [`Call`] of one operation, which takes the path's parameters in order,
//!   the query, and the body, and answers JSON, a type read from it, or the
//!   response itself for a stream;
//! - [`Error`]: why a call failed, with the server's error code when it
//!   answered one.
//!
//! Bodies and answers are JSON values or any serde type: the request and
//! response types the server uses live in `octopus-core`, and a caller that
//! has them may send and read them (`send_as`).

#![forbid(unsafe_code)]

mod call;
// Generated, one constant a line: rustfmt would wrap what the generator
// writes, and the test comparing the two would fail.
#[rustfmt::skip]
pub mod operations;

pub use call::Call;
pub use reqwest::Method;

/// One operation of the API: its OpenAPI `operationId`, its method, and its
/// path, whose `{name}` segments a call fills in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    pub id: &'static str,
    pub method: Method,
    pub path: &'static str,
}

impl Operation {
    pub const fn new(id: &'static str, method: Method, path: &'static str) -> Self {
        Self { id, method, path }
    }

    /// The names of the path's parameters, in order.
    pub fn parameters(&self) -> impl Iterator<Item = &'static str> {
        self.path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
    }
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with an error: its status, and the stable `code`
    /// and `message` of its JSON body (`error` when the body had none).
    #[error("{operation}: {status} {code}: {message}")]
    Answered {
        operation: &'static str,
        status: u16,
        code: String,
        message: String,
    },

    /// The server could not be reached, or its answer not read.
    #[error("{operation}: cannot reach the Octopus server at {base}: {source}")]
    Transport {
        operation: &'static str,
        base: String,
        #[source]
        source: reqwest::Error,
    },

    /// A successful answer that is not the JSON the caller asked for.
    #[error("{operation}: the answer is not what was expected: {source}")]
    Decode {
        operation: &'static str,
        #[source]
        source: serde_json::Error,
    },

    /// The call was put together wrongly: a path parameter missing or too
    /// many, or no key where the operation needs one.
    #[error("{operation}: {problem}")]
    Call {
        operation: &'static str,
        problem: String,
    },
}

impl Error {
    /// The server's error code, when it answered one (`agent_not_found`).
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Answered { code, .. } => Some(code),
            _ => None,
        }
    }

    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Answered { status, .. } => Some(*status),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A server's URL and the API key its calls carry.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    key: Option<String>,
}

impl Client {
    /// A client of the server at `base` (`http://127.0.0.1:8080`), sending
    /// `key` as the bearer token.
    pub fn new(base: &str, key: Option<&str>) -> Self {
        octopus_provider_http::install_tls_provider();
        Self::with_http(reqwest::Client::new(), base, key)
    }

    /// The same over an HTTP client of the caller's (a benchmark's, with
    /// its own pool and timeouts).
    pub fn with_http(http: reqwest::Client, base: &str, key: Option<&str>) -> Self {
        Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            key: key.map(str::to_owned),
        }
    }

    /// The same server with another key (a tenant's, after the admin key
    /// created the tenant).
    pub fn with_key(&self, key: &str) -> Self {
        Self {
            key: Some(key.to_owned()),
            ..self.clone()
        }
    }

    /// The server's URL, without a trailing slash.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Starts a call of `operation`.
    pub fn call(&self, operation: Operation) -> Call<'_> {
        Call::new(self, operation)
    }

    /// The id of the agent `agent` names: an id as it is, or else the
    /// tenant's agent of that name.
    pub async fn agent_id(&self, agent: &str) -> Result<String> {
        self.id_of(Named::Agent, agent).await
    }

    /// The id of what `name` names: an id as it is, or else the one object
    /// of the kind with that name (a key's and a procedure's names need not
    /// be unique: several with the name are an error that lists them).
    pub async fn id_of(&self, kind: Named<'_>, name: &str) -> Result<String> {
        if is_id(name) {
            return Ok(name.to_owned());
        }
        let (operation, what, listed_by) = match kind {
            Named::Agent => (
                operations::LIST_AGENTS,
                "agent",
                "octopus agents list".to_owned(),
            ),
            Named::Tenant => (
                operations::LIST_TENANTS,
                "tenant",
                "octopus tenants list".to_owned(),
            ),
            Named::Key { tenant } => (
                operations::LIST_API_KEYS,
                "live key",
                format!("octopus keys list {tenant}"),
            ),
            Named::Procedure => (
                operations::LIST_PROCEDURES,
                "procedure",
                "octopus procedures list".to_owned(),
            ),
        };
        let tenant = match kind {
            Named::Key { tenant } => Some(Box::pin(self.id_of(Named::Tenant, tenant)).await?),
            _ => None,
        };
        const PAGE: usize = 200;
        let mut found = Vec::new();
        for offset in (0..).step_by(PAGE) {
            let mut call = self.call(operation.clone());
            call = match &tenant {
                // A tenant's keys come in one list.
                Some(tenant) => call.param(tenant),
                None => call.query("limit", PAGE).query("offset", offset),
            };
            let page = call.send().await?;
            let items = page["items"].as_array().cloned().unwrap_or_default();
            found.extend(
                items
                    .iter()
                    .filter(|item| item["name"] == name && item["revoked_at"].is_null())
                    .filter_map(|item| item["id"].as_str().map(str::to_owned)),
            );
            if tenant.is_some() || items.len() < PAGE {
                break;
            }
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(Error::Call {
                operation: operation.id,
                problem: format!("no {what} named {name:?} (`{listed_by}` shows them)"),
            }),
            n => Err(Error::Call {
                operation: operation.id,
                problem: format!(
                    "{n} {what}s are named {name:?} ({}): give the id (`{listed_by}` shows them)",
                    found.join(", ")
                ),
            }),
        }
    }
}

/// A kind of object that has a name a person may give instead of its id.
#[derive(Clone, Copy, Debug)]
pub enum Named<'a> {
    Agent,
    Tenant,
    /// A key of the tenant named or numbered `tenant` (the admin key's).
    Key {
        tenant: &'a str,
    },
    Procedure,
}

/// Whether `text` is written as an id (a UUID) rather than a name.
pub fn is_id(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(at, c)| match at {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `segment` percent-encoded for a URL path: user ids are free text.
fn encode_path(segment: &str) -> String {
    segment
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_parameters_in_order() {
        let facts = operations::LIST_FACTS;
        assert_eq!(
            facts.parameters().collect::<Vec<_>>(),
            ["agent_id", "user_id"]
        );
        assert_eq!(operations::CREATE_TENANT.parameters().count(), 0);
    }

    #[test]
    fn free_text_in_a_path_is_encoded() {
        assert_eq!(
            encode_path("ann@example.com/x y"),
            "ann%40example.com%2Fx%20y"
        );
        assert_eq!(encode_path("user-1_a.b~"), "user-1_a.b~");
    }

    #[test]
    fn ids_are_told_from_names() {
        assert!(is_id("0190f5c2-7d4e-7c3a-9b1e-4a2f6c8d0e1f"));
        assert!(!is_id("support"));
        assert!(!is_id("0190f5c2x7d4e-7c3a-9b1e-4a2f6c8d0e1f"));
    }
}
