//! Talking to a server over HTTP, as a client of the API does.

use serde_json::Value;

/// Sends `request` and returns the JSON it answers; a status other than 2xx
/// is an error naming `path`, the status and the body.
pub async fn send(request: reqwest::RequestBuilder, path: &str) -> anyhow::Result<Value> {
    let response = request.send().await?;
    let status = response.status();
    let body: Value = response.json().await?;
    anyhow::ensure!(status.is_success(), "{path} answered {status}: {body}");
    Ok(body)
}

/// Memory jobs queued on the server, summed over tenants (its `/metrics`).
pub async fn queued_jobs(
    client: &reqwest::Client,
    url: &str,
    admin_key: &str,
) -> anyhow::Result<f64> {
    let metrics = client
        .get(format!("{url}/metrics"))
        .bearer_auth(admin_key)
        .send()
        .await?
        .text()
        .await?;
    Ok(metrics
        .lines()
        .filter(|l| l.starts_with("octopus_memory_jobs_queued{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}
