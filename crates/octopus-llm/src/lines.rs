//! Reading a streamed response body line by line: server-sent events (OpenAI,
//! Azure OpenAI, Anthropic) and newline-delimited JSON (Ollama).

use octopus_core::chat::{ChatError, Fault};

use crate::{Endpoint, ReplyLimits};

/// Lines of a body that arrives in chunks of any size. A line may be split
/// across chunks, and a chunk may split a UTF-8 character: bytes are kept
/// until their line ends. A line longer than the endpoint's limit, or a body
/// longer than its limit, fails the stream: what is kept is bounded.
pub(crate) struct Lines {
    response: reqwest::Response,
    pending: Vec<u8>,
    done: bool,
    provider: &'static str,
    limits: ReplyLimits,
    read: usize,
}

impl Lines {
    pub(crate) fn new(endpoint: &Endpoint, response: reqwest::Response) -> Self {
        Self {
            response,
            pending: Vec::new(),
            done: false,
            provider: endpoint.provider,
            limits: endpoint.limits(),
            read: 0,
        }
    }

    /// The next line without its line ending; `None` at the end of the body.
    pub(crate) async fn next(&mut self) -> Result<Option<String>, ChatError> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=end).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return self.text(line).map(Some);
            }
            if self.done {
                if self.pending.is_empty() {
                    return Ok(None);
                }
                let rest = std::mem::take(&mut self.pending);
                return self.text(rest).map(Some);
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => {
                    self.read += chunk.len();
                    self.pending.extend_from_slice(&chunk);
                    self.check_bounds()?;
                }
                Ok(None) => self.done = true,
                Err(error) => {
                    let what = match error.is_timeout() {
                        true => "the stream stalled past the read timeout".to_owned(),
                        false => format!("the stream broke off: {error}"),
                    };
                    return Err(ChatError::new(self.provider, Fault::Provider, what));
                }
            }
        }
    }

    fn check_bounds(&self) -> Result<(), ChatError> {
        let too_long = |what: &str, limit: usize| {
            Err(ChatError::new(
                self.provider,
                Fault::Provider,
                format!("{what} is longer than the {limit} bytes Octopus reads of one"),
            ))
        };
        if self.read > self.limits.stream_total {
            return too_long("the stream", self.limits.stream_total);
        }
        if self.pending.len() > self.limits.stream_line {
            return too_long("a line of the stream", self.limits.stream_line);
        }
        Ok(())
    }

    fn text(&self, line: Vec<u8>) -> Result<String, ChatError> {
        String::from_utf8(line).map_err(|_| {
            ChatError::new(
                self.provider,
                Fault::Provider,
                "streamed a line that is not UTF-8",
            )
        })
    }
}

/// One server-sent event: its `event:` name (empty when absent) and its
/// `data:` lines joined by newlines.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Event {
    pub name: String,
    pub data: String,
}

/// Server-sent events over [`Lines`] (WHATWG HTML, "Server-sent events":
/// fields up to a blank line; `:` starts a comment).
pub(crate) struct Events(Lines);

impl Events {
    pub(crate) fn new(endpoint: &Endpoint, response: reqwest::Response) -> Self {
        Self(Lines::new(endpoint, response))
    }

    pub(crate) async fn next(&mut self) -> Result<Option<Event>, ChatError> {
        let mut event = Event::default();
        let mut has_data = false;
        loop {
            let Some(line) = self.0.next().await? else {
                return Ok(has_data.then_some(event));
            };
            if line.is_empty() {
                if has_data {
                    return Ok(Some(event));
                }
                event = Event::default();
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => event.name = value.to_owned(),
                "data" => {
                    if has_data {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    has_data = true;
                }
                _ => {} // comments (`: ping`), `id`, `retry`
            }
        }
    }
}
