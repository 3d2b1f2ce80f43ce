//! Reading a provider's response body within a bound, so that a provider
//! (or an endpoint a tenant chose) cannot fill the server's memory with one
//! answer.

/// The body of `response`, read until its end; `Ok(None)` as soon as it is
/// longer than `limit` bytes, the rest left unread.
pub async fn read_at_most(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let expected = response.content_length().unwrap_or(0);
    if expected > limit as u64 {
        return Ok(None);
    }
    let mut body = Vec::with_capacity(expected as usize);
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// The first `limit` bytes of an error body as text (lossy), for reading the
/// provider's message out of it; a longer body is cut there.
pub async fn error_text(mut response: reqwest::Response, limit: usize) -> String {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}
