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
