//! `precision = "auto"`: every number format this CPU can run is timed on
//! the same small batch when the model loads, and the fastest is kept. A
//! CPU flag says what an instruction set offers, not what it delivers on a
//! given host: bf16 ran at 4× PyTorch on one machine of a kind and slower
//! than f32 on another of the same kind. Candidates: f32 always, bf16 with
//! AVX-512 BF16, int8 with VNNI or AVX2.

use std::fmt;
use std::time::{Duration, Instant};

use octopus_core::embedding::EmbedError;

use super::{Batching, LocalEmbedder, Precision};

/// Chat-length texts the candidates are timed on: a query's and a memory
/// worker's usual inputs, short enough that a run takes milliseconds. The
/// int8 weights are shaped by their ranges too.
pub(super) const TEXTS: [&str; 8] = [
    "Where did my parcel end up after the depot in Lisbon?",
    "I moved to Porto last month, please update my address.",
    "Can you book a table for two at eight tonight?",
    "My daughter is allergic to peanuts, so no satay sauce.",
    "The invoice from March was charged twice on my card.",
    "We talked about hiking in the Alps last summer, remember?",
    "Remind me what I said about the kitchen renovation.",
    "Which of the plans includes phone support on weekends?",
];

/// Timed runs per candidate, after one that warms its caches; the fastest
/// run counts (the others met the noise of a busy machine).
const RUNS: usize = 2;

/// What the calibration measured, and what it chose.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Each candidate's fastest run over the calibration texts, in the order
    /// tried; empty when the CPU runs one precision and nothing was timed.
    pub timings: Vec<(Precision, Duration)>,
    pub chosen: Precision,
}

impl Calibration {
    /// The fastest of `timings`; on a tie, the one tried first (f32, whose
    /// vectors are the reference's own). `None` for no timings.
    pub fn of(timings: Vec<(Precision, Duration)>) -> Option<Self> {
        let (chosen, _) = timings
            .iter()
            .copied()
            .reduce(|best, next| if next.1 < best.1 { next } else { best })?;
        Some(Self { timings, chosen })
    }
}

impl fmt::Display for Calibration {
    /// `bf16 (f32 12.10 ms, bf16 6.30 ms)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.timings.is_empty() {
            return write!(f, "{} (the one this CPU runs)", self.chosen.as_str());
        }
        write!(f, "{} (", self.chosen.as_str())?;
        for (i, (precision, took)) in self.timings.iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            let ms = took.as_secs_f64() * 1e3;
            write!(f, "{separator}{} {ms:.2} ms", precision.as_str())?;
        }
        write!(f, ")")
    }
}

impl LocalEmbedder {
    /// Loads the model in `dir` once per precision this CPU can run, times
    /// each on the calibration texts, and keeps the fastest: what
    /// `precision = "auto"` means. With one candidate, nothing is timed.
    pub fn load_fastest(
        dir: &std::path::Path,
        batching: Batching,
    ) -> Result<(Self, Calibration), EmbedError> {
        let in_format = |precision| Batching {
            precision,
            ..batching
        };
        let candidates = Precision::available();
        let (embedder, calibration) = if let [only] = candidates[..] {
            let calibration = Calibration {
                timings: Vec::new(),
                chosen: only,
            };
            (Self::load_with(dir, in_format(only))?, calibration)
        } else {
            let mut fastest: Option<(Self, Duration)> = None;
            let mut timings = Vec::new();
            for precision in candidates {
                let embedder = Self::load_with(dir, in_format(precision))?;
                let took = embedder.time_calibration_texts()?;
                timings.push((precision, took));
                if fastest.as_ref().is_none_or(|(_, best)| took < *best) {
                    fastest = Some((embedder, took));
                }
            }
            let (Some(calibration), Some((embedder, _))) = (Calibration::of(timings), fastest)
            else {
                return Err(EmbedError::Model(
                    "no precision to load the model in".into(),
                ));
            };
            (embedder, calibration)
        };
        tracing::info!(%calibration, "embedding precision chosen by measurement");
        Ok((embedder, calibration))
    }

    fn time_calibration_texts(&self) -> Result<Duration, EmbedError> {
        self.embed_blocking(&TEXTS)?;
        let mut fastest = Duration::MAX;
        for _ in 0..RUNS {
            let started = Instant::now();
            self.embed_blocking(&TEXTS)?;
            fastest = fastest.min(started.elapsed());
        }
        Ok(fastest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_fastest_measured_is_chosen_and_a_tie_keeps_f32() {
        let slow_bf16 = Calibration::of(vec![(Precision::F32, ms(7)), (Precision::Bf16, ms(12))]);
        assert_eq!(slow_bf16.map(|c| c.chosen), Some(Precision::F32));
        let fast_bf16 = Calibration::of(vec![(Precision::F32, ms(12)), (Precision::Bf16, ms(3))]);
        assert_eq!(fast_bf16.map(|c| c.chosen), Some(Precision::Bf16));
        let tie = Calibration::of(vec![(Precision::F32, ms(5)), (Precision::Bf16, ms(5))]);
        assert_eq!(tie.map(|c| c.chosen), Some(Precision::F32));
        let three = Calibration::of(vec![
            (Precision::F32, ms(9)),
            (Precision::Bf16, ms(6)),
            (Precision::Int8, ms(4)),
        ]);
        assert_eq!(three.map(|c| c.chosen), Some(Precision::Int8));
        let slow_int8 = Calibration::of(vec![
            (Precision::F32, ms(9)),
            (Precision::Bf16, ms(6)),
            (Precision::Int8, ms(8)),
        ]);
        assert_eq!(slow_int8.map(|c| c.chosen), Some(Precision::Bf16));
        assert_eq!(Calibration::of(Vec::new()), None);
    }

    #[test]
    fn the_calibration_reads_as_a_line() {
        let single = Calibration {
            timings: Vec::new(),
            chosen: Precision::F32,
        };
        assert_eq!(single.to_string(), "f32 (the one this CPU runs)");
        let calibration = Calibration::of(vec![
            (Precision::F32, ms(12)),
            (Precision::Bf16, Duration::from_micros(6300)),
        ])
        .unwrap();
        assert_eq!(calibration.to_string(), "bf16 (f32 12.00 ms, bf16 6.30 ms)");
    }
}
