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

/// Polls `/metrics` until no memory job is queued (an hour at most).
pub async fn wait_for_memory_jobs(admin: &Client) -> anyhow::Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    while queued_jobs(admin).await? > 0.0 {
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "memory jobs still queued after an hour"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    Ok(())
}
