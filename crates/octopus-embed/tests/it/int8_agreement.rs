//! How close the int8 model's vectors stay to sentence-transformers' own,
//! for each int8 path's test (the AVX2 path's runs in a process of its
//! own, where it may lower the products' instructions).

use octopus_embed::local::{Batching, LocalEmbedder, Precision};
use octopus_embed::model_dir::default_model_dir;

#[derive(serde::Deserialize)]
struct Reference {
    sentences: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

/// Loads the model in int8 and checks every fixture text within 0.995 of
/// the reference vector, and not f32's own (which would mean int8 never
/// ran). `path` names the products' instructions in the messages.
pub fn assert_int8_stays_close(path: &str) {
    let reference: Reference =
        serde_json::from_str(include_str!("../fixtures/all-MiniLM-L6-v2.json")).unwrap();
    let batching = Batching {
        precision: Precision::Int8,
        ..Batching::default()
    };
    let model = LocalEmbedder::load_with(&default_model_dir(), batching).unwrap();
    assert_eq!(model.precision(), Precision::Int8);
    let texts: Vec<&str> = reference.sentences.iter().map(String::as_str).collect();
    let vectors = model.embed_blocking(&texts).unwrap();
    assert_eq!(vectors.len(), reference.vectors.len());
    let cosines: Vec<f32> = vectors
        .iter()
        .zip(&reference.vectors)
        .map(|(a, b)| cosine(a, b))
        .collect();
    let lowest = cosines.iter().copied().fold(f32::MAX, f32::min);
    let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
    eprintln!(
        "int8 on {path}: cosine against sentence-transformers: lowest {lowest:.6}, mean {mean:.6}"
    );
    assert!(lowest >= 0.995, "int8 on {path} drifted: cosine {lowest}");
    assert!(
        lowest < 0.99999,
        "int8 on {path} must differ from f32 at all: cosine {lowest}"
    );
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}
