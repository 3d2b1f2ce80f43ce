//! The local model against the reference implementation.
//!
//! Needs the default model in the model cache (`scripts/fetch-model.sh`, which
//! `scripts/test.sh` runs first).

use octopus_core::embedding::Embedder;
use octopus_embed::local::LocalEmbedder;
use octopus_embed::model_dir::default_model_dir;
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    sentences: Vec<String>,
    vectors: Vec<Vec<f32>>,
    long_text_tokens: usize,
}

fn fixture() -> Fixture {
    serde_json::from_str(include_str!("../fixtures/all-MiniLM-L6-v2.json")).unwrap()
}

fn model() -> LocalEmbedder {
    let dir = default_model_dir();
    LocalEmbedder::load(&dir).unwrap_or_else(|e| panic!("{e} (model folder {})", dir.display()))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

#[tokio::test]
async fn vectors_match_sentence_transformers() {
    let fixture = fixture();
    assert!(
        fixture.long_text_tokens > 256,
        "the fixture must exercise truncation at 256 tokens"
    );
    let model = model();
    assert_eq!(model.dimension(), 384);
    let vectors = model.embed(&fixture.sentences).await.unwrap();
    assert_eq!(vectors.len(), fixture.sentences.len());
    let lowest = vectors
        .iter()
        .zip(&fixture.vectors)
        .map(|(a, b)| cosine(a, b))
        .fold(f32::MAX, f32::min);
    eprintln!("lowest cosine against sentence-transformers: {lowest:.6}");
    for ((sentence, ours), reference) in
        fixture.sentences.iter().zip(&vectors).zip(&fixture.vectors)
    {
        let similarity = cosine(ours, reference);
        assert!(
            similarity >= 0.999,
            "cosine {similarity} for {:?}",
            &sentence[..sentence.len().min(40)]
        );
        let length: f32 = ours.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((length - 1.0).abs() < 1e-4, "vectors are L2-normalised");
    }
}

#[test]
fn a_vector_does_not_depend_on_its_batch() {
    let fixture = fixture();
    let model = model();
    let long = fixture.sentences.last().unwrap().as_str();
    let alone = model.embed_blocking(&["hi"]).unwrap();
    let padded = model.embed_blocking(&[long, "hi"]).unwrap();
    let similarity = cosine(&alone[0], &padded[1]);
    assert!(
        similarity > 0.99999,
        "padding leaked into the vector: cosine {similarity}"
    );
}

#[test]
fn token_counts_are_not_truncated() {
    let fixture = fixture();
    let model = model();
    assert_eq!(model.max_input_tokens(), Some(256));
    let long = fixture.sentences.last().unwrap();
    assert_eq!(
        model.count_tokens(long),
        Some(fixture.long_text_tokens - 2),
        "reference counts [CLS] and [SEP]"
    );
    assert_eq!(model.count_tokens("hi"), Some(1));
}

#[test]
fn a_folder_without_the_model_is_a_clear_error() {
    let empty = std::env::temp_dir().join("octopus-no-model-here");
    std::fs::create_dir_all(&empty).unwrap();
    let Err(error) = LocalEmbedder::load(&empty) else {
        panic!("an empty folder loaded")
    };
    assert!(
        error.to_string().contains("config.json")
            || error.to_string().contains("model.safetensors"),
        "{error}"
    );
}

/// Another folder layout by configuration alone: the same weights with CLS
/// pooling and a 512-token window (as bge models ship), against
/// sentence-transformers on the same folder (`scripts/reference/cls_variant.py`).
#[tokio::test]
async fn pooling_and_window_are_read_from_the_folder() {
    #[derive(Deserialize)]
    struct Variant {
        pooling: serde_json::Value,
        sentence_bert: serde_json::Value,
        sentences: Vec<String>,
        vectors: Vec<Vec<f32>>,
    }
    let variant: Variant =
        serde_json::from_str(include_str!("../fixtures/all-MiniLM-L6-v2-cls-512.json")).unwrap();
    let source = default_model_dir();
    let dir = tempfile::tempdir().unwrap();
    copy_folder(&source, dir.path());
    let write = |path: &str, value: &serde_json::Value| {
        std::fs::write(dir.path().join(path), serde_json::to_vec(value).unwrap()).unwrap()
    };
    write("1_Pooling/config.json", &variant.pooling);
    write("sentence_bert_config.json", &variant.sentence_bert);

    let model = LocalEmbedder::load(dir.path()).unwrap();
    assert_eq!(model.max_input_tokens(), Some(512));
    let vectors = model.embed(&variant.sentences).await.unwrap();
    let mean_pooled = model_vectors_of_default(&variant.sentences).await;
    for (i, (ours, reference)) in vectors.iter().zip(&variant.vectors).enumerate() {
        let similarity = cosine(ours, reference);
        assert!(similarity >= 0.999, "sentence {i}: cosine {similarity}");
        assert!(
            cosine(ours, &mean_pooled[i]) < 0.999 || variant.sentences[i].is_empty(),
            "sentence {i}: CLS pooling must differ from the default mean pooling"
        );
    }
}

async fn model_vectors_of_default(sentences: &[String]) -> Vec<Vec<f32>> {
    model().embed(sentences).await.unwrap()
}

fn copy_folder(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Many batches on two threads, one batch split across two, and one thread:
/// the same vectors, in the order of the texts.
#[test]
fn threads_and_batch_sizes_do_not_change_the_vectors() {
    use octopus_embed::local::Batching;
    let fixture = fixture();
    let texts: Vec<&str> = fixture.sentences.iter().map(String::as_str).collect();
    let load = |max_inputs, threads| {
        let batching = Batching {
            max_inputs,
            threads,
            ..Batching::default()
        };
        LocalEmbedder::load_with(&default_model_dir(), batching).unwrap()
    };
    let alone = load(1, 1).embed_blocking(&texts).unwrap();
    for (max_inputs, threads) in [(2, 2), (64, 2), (64, 1)] {
        let vectors = load(max_inputs, threads).embed_blocking(&texts).unwrap();
        assert_eq!(vectors.len(), texts.len());
        for (i, (a, b)) in alone.iter().zip(&vectors).enumerate() {
            let similarity = cosine(a, b);
            assert!(
                similarity > 0.99999,
                "text {i} with {max_inputs} inputs per batch on {threads} threads: cosine {similarity}"
            );
        }
    }
}

/// bf16 dense layers, where the CPU has them: within the bar f32 must meet,
/// though not identical to f32 (the embedding bench reports recall with each).
#[test]
fn bf16_vectors_stay_close_to_the_reference() {
    use octopus_embed::local::{Batching, Precision};
    let fixture = fixture();
    let batching = Batching {
        precision: Precision::Bf16,
        ..Batching::default()
    };
    let model = match LocalEmbedder::load_with(&default_model_dir(), batching) {
        Ok(model) => model,
        Err(error) => {
            assert!(error.to_string().contains("AVX-512 BF16"), "{error}");
            eprintln!("skipped: {error}");
            return;
        }
    };
    let texts: Vec<&str> = fixture.sentences.iter().map(String::as_str).collect();
    let vectors = model.embed_blocking(&texts).unwrap();
    let lowest = vectors
        .iter()
        .zip(&fixture.vectors)
        .map(|(a, b)| cosine(a, b))
        .fold(f32::MAX, f32::min);
    eprintln!("bf16: lowest cosine against sentence-transformers: {lowest:.6}");
    assert!(lowest >= 0.999, "bf16 drifted: cosine {lowest}");
    assert!(
        lowest < 0.999999,
        "bf16 must differ from f32 at all: cosine {lowest}"
    );
}

/// int8 dense layers run on every CPU (VNNI where present, else AVX2's
/// pairs or the scalar loop): every fixture text within 0.995 of
/// sentence-transformers' vector, and not f32's own.
#[test]
fn int8_vectors_stay_close_to_the_reference() {
    crate::int8_agreement::assert_int8_stays_close(
        octopus_embed::local::Int8Instructions::detect().name(),
    );
}

/// `precision = "auto"`: each precision this CPU runs is loaded and timed,
/// and the embedder kept is the one measured fastest (f32 on a tie).
#[test]
fn auto_keeps_the_precision_its_calibration_measured_fastest() {
    use octopus_embed::local::{Batching, Precision};
    let (model, calibration) =
        LocalEmbedder::load_fastest(&default_model_dir(), Batching::default()).unwrap();
    let tried: Vec<Precision> = calibration.timings.iter().map(|(p, _)| *p).collect();
    let available = Precision::available();
    if let [only] = available[..] {
        assert!(
            tried.is_empty(),
            "one candidate is not timed: {calibration}"
        );
        assert_eq!(calibration.chosen, only);
    } else {
        assert_eq!(tried, available);
        let fastest = calibration
            .timings
            .iter()
            .min_by_key(|(_, took)| *took)
            .map(|(precision, _)| *precision);
        assert_eq!(Some(calibration.chosen), fastest, "{calibration}");
    }
    assert_eq!(model.precision(), calibration.chosen);
    let fixture = fixture();
    let vectors = model
        .embed_blocking(&[fixture.sentences[0].as_str()])
        .unwrap();
    assert!(cosine(&vectors[0], &fixture.vectors[0]) >= 0.995);
}
