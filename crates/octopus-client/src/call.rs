//! One call of an operation, put together and sent.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Client, Error, Operation, Result, encode_path};

/// What a request carries.
enum Body {
    None,
    Json(Value),
    Raw(&'static str, Vec<u8>),
}

/// A call being put together: [`Client::call`], then its path parameters
/// in order, its query and body, then `send`.
pub struct Call<'a> {
    client: &'a Client,
    operation: Operation,
    parameters: Vec<String>,
    query: Vec<(&'static str, String)>,
    body: Body,
    key: Option<String>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(client: &'a Client, operation: Operation) -> Self {
        Self {
            client,
            operation,
            parameters: Vec::new(),
            query: Vec::new(),
            body: Body::None,
            key: client.key.clone(),
        }
    }

    /// The next `{name}` of the path.
    pub fn param(mut self, value: impl std::fmt::Display) -> Self {
        self.parameters.push(value.to_string());
        self
    }

    /// A query parameter.
    pub fn query(mut self, name: &'static str, value: impl std::fmt::Display) -> Self {
        self.query.push((name, value.to_string()));
        self
    }

    /// A query parameter when it is set.
    pub fn query_opt(self, name: &'static str, value: Option<impl std::fmt::Display>) -> Self {
        match value {
            Some(value) => self.query(name, value),
            None => self,
        }
    }

    /// Sends `key` instead of the client's (one of many tenants').
    pub fn key(mut self, key: &str) -> Self {
        self.key = Some(key.to_owned());
        self
    }

    /// A JSON body.
    pub fn json(mut self, body: &impl Serialize) -> Self {
        self.body = Body::Json(serde_json::to_value(body).unwrap_or(Value::Null));
        self
    }

    /// A body of another media type (a document's text, a dump's lines).
    pub fn bytes(mut self, content_type: &'static str, bytes: Vec<u8>) -> Self {
        self.body = Body::Raw(content_type, bytes);
        self
    }

    /// Sends the call; the answer's JSON (`null` for an empty one).
    pub async fn send(self) -> Result<Value> {
        let operation = self.operation.id;
        let text = self.text().await?;
        if text.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text).map_err(|source| Error::Decode { operation, source })
    }

    /// Sends the call; the answer's text, as it is (`/metrics`).
    pub async fn text(self) -> Result<String> {
        let operation = self.operation.id;
        let base = self.client.base.clone();
        self.open()
            .await?
            .text()
            .await
            .map_err(|source| Error::Transport {
                operation,
                base,
                source,
            })
    }

    /// Sends the call and reads the answer as `T`.
    pub async fn send_as<T: DeserializeOwned>(self) -> Result<T> {
        let operation = self.operation.id;
        let value = self.send().await?;
        serde_json::from_value(value).map_err(|source| Error::Decode { operation, source })
    }

    /// Sends the call and hands back a successful response unread, for an
    /// answer read as it arrives (server-sent events, a dump's lines); an
    /// error answer is read whole into the error.
    pub async fn open(self) -> Result<reqwest::Response> {
        let operation = self.operation.id;
        let url = format!("{}{}", self.client.base, self.path()?);
        let Some(key) = &self.key else {
            return Err(Error::Call {
                operation,
                problem: "no API key: pass --api-key or set OCTOPUS_API_KEY".into(),
            });
        };
        let mut request = self
            .client
            .http
            .request(self.operation.method.clone(), &url)
            .query(&self.query)
            .bearer_auth(key);
        match self.body {
            Body::None => {}
            Body::Json(body) => request = request.json(&body),
            Body::Raw(content_type, bytes) => {
                request = request
                    .header(reqwest::header::CONTENT_TYPE, content_type)
                    .body(bytes);
            }
        }
        let response = request.send().await.map_err(|source| Error::Transport {
            operation,
            base: self.client.base.clone(),
            source,
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let text = response.text().await.unwrap_or_default();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        let code = value["error"]["code"]
            .as_str()
            .unwrap_or("error")
            .to_owned();
        let message = value["error"]["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| value.to_string());
        Err(Error::Answered {
            operation,
            status: status.as_u16(),
            code,
            message,
        })
    }

    /// The path with its parameters in place, each encoded.
    fn path(&self) -> Result<String> {
        let mut given = self.parameters.iter();
        let mut path = String::with_capacity(self.operation.path.len() + 40);
        for segment in self.operation.path.split('/').skip(1) {
            path.push('/');
            match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => {
                    let value = given.next().ok_or_else(|| Error::Call {
                        operation: self.operation.id,
                        problem: format!("no value for the path's {{{name}}}"),
                    })?;
                    path.push_str(&encode_path(value));
                }
                None => path.push_str(segment),
            }
        }
        if given.next().is_some() {
            return Err(Error::Call {
                operation: self.operation.id,
                problem: format!("more path parameters than {} names", self.operation.path),
            });
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use crate::operations::{LIST_FACTS, LIST_TENANTS};
    use crate::{Client, Error};

    #[test]
    fn parameters_fill_the_path_in_order_and_must_all_be_given() {
        let client = Client::new("http://127.0.0.1:1/", Some("k"));
        let call = client.call(LIST_FACTS).param("a1").param("ann smith");
        assert_eq!(
            call.path().unwrap(),
            "/v1/agents/a1/users/ann%20smith/facts"
        );
        let short = client.call(LIST_FACTS).param("a1").path().unwrap_err();
        assert!(matches!(short, Error::Call { .. }), "{short}");
        assert!(short.to_string().contains("{user_id}"), "{short}");
        let long = client.call(LIST_TENANTS).param("x").path().unwrap_err();
        assert!(long.to_string().contains("more path parameters"), "{long}");
    }
}
