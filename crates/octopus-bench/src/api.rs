//! What the benchmarks read of a server beside its answers.

use octopus_client::Client;
use octopus_client::operations as op;

/// Memory jobs queued on the server, summed over tenants (its `/metrics`,
/// read with the admin key).
pub async fn queued_jobs(admin: &Client) -> anyhow::Result<f64> {
    let metrics = admin.call(op::METRICS).text().await?;
    Ok(metrics
        .lines()
        .filter(|l| l.starts_with("octopus_memory_jobs_queued{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}
