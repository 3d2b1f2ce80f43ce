//! Latency figures as the benches print them.

use std::time::Duration;

/// p50, p95 and the maximum of `times`, in milliseconds.
pub fn p50_p95_max(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let at = |p: f64| {
        let index = ((times.len() as f64 * p) as usize).min(times.len().saturating_sub(1));
        times.get(index).map_or(f64::NAN, |t| t.as_secs_f64() * 1e3)
    };
    (at(0.5), at(0.95), at(1.0))
}

/// The `p` quantile of `samples` (0 to 1), nearest rank; sorts them.
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index.min(samples.len() - 1)]
}

/// A duration in milliseconds, to the microsecond.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}
