//! Synthetic embeddings with the structure of real ones: a mixture of Gaussians
//! fitted by spherical k-means to real vectors, each component with its
//! cluster's full sample covariance, sampled and L2-normalised.
//!
//! Uniformly random unit vectors in 384 dimensions are all nearly orthogonal to
//! each other, which no real corpus is, and which makes every approximate index
//! look broken. A diagonal covariance per cluster comes close to that failure:
//! it spreads each cluster over all 384 directions, where real embeddings vary
//! along few. Sampling `mean + Σ wᵢ (xᵢ − mean)` over the cluster's members,
//! with `wᵢ ~ N(0, 1/(n−1))`, draws from a Gaussian with exactly the cluster's
//! sample covariance, so the synthetic vectors vary along the same few
//! directions the real ones do. The bench prints the mean similarity of a
//! query's nearest neighbour for real and synthetic vectors, to show how close
//! the structure is.

use super::cache::Vectors;
use octopus_vector::dot;

pub struct Mixture {
    dimension: usize,
    /// Cumulative component weights, for sampling a component.
    cumulative: Vec<f64>,
    means: Vec<Vec<f32>>,
    /// Each cluster's members minus its mean.
    residuals: Vec<Vec<Vec<f32>>>,
}

impl Mixture {
    /// Fits `components` clusters to `real` with `iterations` rounds of spherical
    /// k-means, then takes each cluster's weight, mean and members.
    pub fn fit(real: &Vectors, components: usize, iterations: usize, rng: &mut Rng) -> Self {
        let dimension = real.dimension;
        let count = real.len();
        let mut centroids: Vec<Vec<f32>> = (0..components)
            .map(|_| real.get(rng.below(count)).to_vec())
            .collect();
        let mut assignment = vec![0usize; count];
        for _ in 0..iterations {
            for (at, vector) in real.rows().enumerate() {
                assignment[at] = nearest(&centroids, vector);
            }
            let mut sums = vec![vec![0.0f32; dimension]; components];
            for (vector, &cluster) in real.rows().zip(&assignment) {
                for (sum, x) in sums[cluster].iter_mut().zip(vector) {
                    *sum += x;
                }
            }
            for (centroid, sum) in centroids.iter_mut().zip(sums) {
                let norm = dot(&sum, &sum).sqrt();
                // An empty cluster keeps its old centroid.
                if norm > 0.0 {
                    *centroid = sum.into_iter().map(|x| x / norm).collect();
                }
            }
        }
        let mut sizes = vec![0usize; components];
        let mut means = vec![vec![0.0f32; dimension]; components];
        for (vector, &cluster) in real.rows().zip(&assignment) {
            sizes[cluster] += 1;
            for (mean, x) in means[cluster].iter_mut().zip(vector) {
                *mean += x;
            }
        }
        for (mean, &size) in means.iter_mut().zip(&sizes) {
            mean.iter_mut().for_each(|x| *x /= size.max(1) as f32);
        }
        let mut residuals = vec![Vec::new(); components];
        for (vector, &cluster) in real.rows().zip(&assignment) {
            let residual: Vec<f32> = vector
                .iter()
                .zip(&means[cluster])
                .map(|(x, m)| x - m)
                .collect();
            residuals[cluster].push(residual);
        }
        let mut cumulative = Vec::with_capacity(components);
        let mut total = 0.0;
        for &size in &sizes {
            total += size as f64 / count as f64;
            cumulative.push(total);
        }
        Self {
            dimension,
            cumulative,
            means,
            residuals,
        }
    }

    /// `count` unit vectors drawn from the mixture.
    pub fn sample(&self, count: usize, rng: &mut Rng) -> Vectors {
        let mut data = Vec::with_capacity(count * self.dimension);
        let mut vector = vec![0.0f32; self.dimension];
        for _ in 0..count {
            let pick = rng.unit();
            let component = self
                .cumulative
                .partition_point(|&c| c < pick)
                .min(self.means.len() - 1);
            vector.copy_from_slice(&self.means[component]);
            let members = &self.residuals[component];
            let scale = 1.0 / ((members.len().max(2) - 1) as f32).sqrt();
            for residual in members {
                let weight = rng.normal() * scale;
                for (v, r) in vector.iter_mut().zip(residual) {
                    *v += weight * r;
                }
            }
            let norm = dot(&vector, &vector).sqrt().max(1e-12);
            data.extend(vector.iter().map(|x| x / norm));
        }
        Vectors {
            dimension: self.dimension,
            data,
        }
    }
}

fn nearest(centroids: &[Vec<f32>], vector: &[f32]) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (at, centroid) in centroids.iter().enumerate() {
        let score = dot(centroid, vector);
        if score > best.1 {
            best = (at, score);
        }
    }
    best.0
}

/// SplitMix64: small, fast, and seeded, so every run samples the same vectors.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize
    }

    /// Standard normal, by Box–Muller.
    pub fn normal(&mut self) -> f32 {
        let u = self.unit().max(f64::MIN_POSITIVE);
        let v = self.unit();
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }
}
