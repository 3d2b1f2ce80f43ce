//! A BERT-family sentence-embedding model, run in-process on CPU.
//!
//! Inputs are tokenised with the folder's `tokenizer.json` and truncated to
//! the folder's `max_seq_length`; the encoder (`encoder`, our own forward
//! pass) runs them without padding; token vectors are pooled and normalised
//! as the folder's sentence-transformers modules say.

mod calibration;
#[cfg(feature = "candle")]
mod candle_forward;
mod encoder;
mod folder;
mod mapped;
mod pooling;
mod wordpiece;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use octopus_core::embedding::{EmbedError, Embedder};

pub use calibration::Calibration;
use encoder::{Encoder, Parallelism, Sequence};
pub use encoder::{Int8Instructions, Precision};
pub use folder::FolderConfig;
pub use pooling::Pooling;
pub use wordpiece::{Encoded, WordPiece};

/// How inputs are grouped into forward passes, and how many threads run them.
#[derive(Clone, Copy, Debug)]
pub struct Batching {
    /// Most inputs in one forward pass.
    pub max_inputs: usize,
    /// Most tokens (inputs × the longest input) in one forward pass: bounds the
    /// working memory of a pass, a few megabytes per thousand tokens.
    pub max_tokens: usize,
    /// Threads for one call. Many batches run side by side, one per thread;
    /// a single batch splits its matrix products across them instead.
    pub threads: usize,
    /// The number format of the dense layers.
    pub precision: Precision,
}

impl Default for Batching {
    fn default() -> Self {
        Self {
            max_inputs: 32,
            max_tokens: 1024,
            threads: default_threads(),
            precision: Precision::default(),
        }
    }
}

/// `RAYON_NUM_THREADS` when set (as for the matrix library's own pool), else
/// the physical cores: a second thread on one core slows dense arithmetic.
/// The fewest tokens in one forward pass whose products are split across
/// threads; below it one thread runs them.
const SPLIT_FROM_TOKENS: usize = 64;

fn default_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(num_cpus::get_physical)
        .max(1)
}

/// Vectors, each with the index of its text.
type Placed = Vec<(usize, Vec<f32>)>;

/// Which implementation runs the model.
enum Forward {
    Encoder(Encoder),
    #[cfg(feature = "candle")]
    Candle(candle_forward::CandleForward),
}

/// A local sentence-embedding model. Cheap to clone; clones share the model.
#[derive(Clone)]
pub struct LocalEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    forward: Forward,
    tokenizer: WordPiece,
    folder: FolderConfig,
    dimension: usize,
    batching: Batching,
    /// Embeddings of stored text running at once: each already uses
    /// `batching.threads` cores, so more only queue as threads (each with
    /// its own scratch memory) and slow each other down; callers wait here
    /// as tasks.
    running: tokio::sync::Semaphore,
    /// The same for readers' queries, apart: a query of a few milliseconds
    /// never waits behind the memory worker's batches, only behind other
    /// queries, and shares the cores with a batch for those milliseconds.
    reading: tokio::sync::Semaphore,
}

/// What a model folder holds, read before choosing the forward pass.
struct Files {
    name: String,
    folder: FolderConfig,
    config_text: String,
    weights: Arc<mapped::MappedFile>,
    tokenizer: WordPiece,
}

impl Files {
    fn read(dir: &Path) -> Result<Self, EmbedError> {
        let folder = FolderConfig::read(dir)?;
        let read = |name: &str| {
            let path = folder::file(dir, name)?;
            std::fs::read(&path)
                .map_err(|e| EmbedError::Model(format!("read {}: {e}", path.display())))
        };
        let config_text = String::from_utf8(read("config.json")?)
            .map_err(|e| EmbedError::Model(format!("config.json: {e}")))?;
        let weights = Arc::new(mapped::MappedFile::open(&folder::file(
            dir,
            "model.safetensors",
        )?)?);
        let tokenizer_path = folder::file(dir, "tokenizer.json")?;
        let tokenizer = WordPiece::from_file(&tokenizer_path)?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "local".into());
        Ok(Self {
            name,
            folder,
            config_text,
            weights,
            tokenizer,
        })
    }
}

impl LocalEmbedder {
    /// Loads the model in `dir`. Blocks for the time it takes to read the weights.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, Batching::default())
    }

    /// Loads the model in `dir`, batching as `batching` says.
    pub fn load_with(dir: &Path, batching: Batching) -> Result<Self, EmbedError> {
        let files = Files::read(dir)?;
        let config: encoder::Config = serde_json::from_str(&files.config_text).map_err(|e| {
            EmbedError::Model(format!("parse {}: {e}", dir.join("config.json").display()))
        })?;
        // Only int8's weights are shaped by sample texts.
        let sample_texts = match batching.precision {
            Precision::Int8 => calibration::TEXTS.to_vec(),
            Precision::F32 | Precision::Bf16 => Vec::new(),
        };
        let sample = files.tokenizer.encode_as_shipped(&sample_texts);
        let sample: Vec<Sequence<'_>> = sample
            .iter()
            .map(|e| Sequence {
                ids: &e.ids,
                types: &e.types,
            })
            .collect();
        let mut encoder =
            Encoder::load(&config, files.weights.bytes(), batching.precision, &sample)?;
        encoder.map_words(Arc::clone(&files.weights))?;
        // The load read every page; the word rows come back as texts use them.
        files.weights.release_pages();
        let dimension = encoder.hidden_size();
        if files.folder.max_seq_length > encoder.max_positions() {
            return Err(EmbedError::Model(format!(
                "max_seq_length {} is beyond the model's {} positions",
                files.folder.max_seq_length,
                encoder.max_positions()
            )));
        }
        Self::build(files, Forward::Encoder(encoder), dimension, batching)
    }

    /// Loads the model in `dir` to run on candle's BERT instead of the
    /// encoder: the implementation before it, for the embedding benchmark.
    #[cfg(feature = "candle")]
    pub fn load_candle(dir: &Path, batching: Batching) -> Result<Self, EmbedError> {
        let files = Files::read(dir)?;
        let config: encoder::Config = serde_json::from_str(&files.config_text)
            .map_err(|e| EmbedError::Model(format!("parse config.json: {e}")))?;
        let forward = {
            let pad_id = files.tokenizer.pad_id();
            candle_forward::CandleForward::load(&files.config_text, files.weights.bytes(), pad_id)?
        };
        Self::build(
            files,
            Forward::Candle(forward),
            config.hidden_size,
            batching,
        )
    }

    fn build(
        files: Files,
        forward: Forward,
        dimension: usize,
        batching: Batching,
    ) -> Result<Self, EmbedError> {
        // Folders often ship a tokenizer padded to a fixed length; the encoder
        // needs no padding. Inputs are truncated where the model's pipeline
        // truncates them, the folder's `max_seq_length`.
        let Files {
            name,
            folder,
            tokenizer,
            ..
        } = files;
        tracing::info!(model = %name, pooling = ?folder.pooling, normalize = folder.normalize, max_seq_length = folder.max_seq_length, threads = batching.threads, precision = ?batching.precision, "loaded embedding model");
        Ok(Self {
            inner: Arc::new(Inner {
                name,
                forward,
                tokenizer,
                dimension,
                folder,
                running: tokio::sync::Semaphore::new(batching.threads.max(1)),
                reading: tokio::sync::Semaphore::new(batching.threads.max(1)),
                batching,
            }),
        })
    }

    /// The number format its dense layers compute in.
    pub fn precision(&self) -> Precision {
        self.inner.batching.precision
    }

    /// Embeds on the calling thread (and, for several batches, on
    /// `Batching::threads − 1` more). CPU-bound: call it from a blocking context.
    ///
    /// Inputs are tokenised once, sorted by length and batched in that order;
    /// vectors are returned in the order of `texts`.
    pub fn embed_blocking(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let max_length = self.inner.folder.max_seq_length;
        let encodings: Vec<Encoded> = texts
            .iter()
            .map(|text| self.inner.tokenizer.encode(text, max_length))
            .collect();
        let batches = self.inner.batches(&encodings);
        let threads = self.inner.batching.threads.min(batches.len()).max(1);
        let mut vectors = vec![Vec::new(); encodings.len()];
        if threads == 1 {
            let tokens: usize = encodings.iter().map(|e| e.ids.len()).sum();
            // A query's products are too small to split: on two threads it
            // took as long as on one when the machine was idle, and longer
            // when the request's own keyword search held the other core
            // (recall's query embedding p50 5.1 ms, against 3.4 alone).
            let parallelism = match self.inner.batching.threads {
                n if n > 1 && tokens > SPLIT_FROM_TOKENS => Parallelism::Rayon(n),
                _ => Parallelism::None,
            };
            for batch in &batches {
                let batch_vectors = self.inner.run(&encodings, batch, parallelism)?;
                for (&i, vector) in batch.iter().zip(batch_vectors) {
                    vectors[i] = vector;
                }
            }
            return Ok(vectors);
        }
        // Whole batches side by side, each on one thread: no thread waits for
        // another inside a product, which small products would do often.
        let next = AtomicUsize::new(0);
        let results: Vec<Result<Placed, EmbedError>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| -> Result<Placed, EmbedError> {
                        let mut done = Vec::new();
                        while let Some(batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
                            let vectors = self.inner.run(&encodings, batch, Parallelism::None)?;
                            done.extend(batch.iter().copied().zip(vectors));
                        }
                        Ok(done)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join().unwrap_or_else(|_| {
                        Err(EmbedError::Model("an embedding thread panicked".into()))
                    })
                })
                .collect()
        });
        for result in results {
            for (i, vector) in result? {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }
}

impl Inner {
    /// The inputs' indices grouped into batches, longest inputs first, each
    /// within the limits.
    fn batches(&self, encodings: &[Encoded]) -> Vec<Vec<usize>> {
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].ids.len()));
        let mut batches = Vec::new();
        let mut rest = order.as_slice();
        while !rest.is_empty() {
            // Longest first, so the first input of a batch is its longest.
            let width = encodings[rest[0]].ids.len().max(1);
            let size = (self.batching.max_tokens / width)
                .clamp(1, self.batching.max_inputs.max(1))
                .min(rest.len());
            let (batch, tail) = rest.split_at(size);
            batches.push(batch.to_vec());
            rest = tail;
        }
        batches
    }

    /// Runs one batch through the model: one pooled vector per input.
    fn run(
        &self,
        encodings: &[Encoded],
        batch: &[usize],
        parallelism: Parallelism,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let sequences: Vec<Sequence<'_>> = batch
            .iter()
            .map(|&i| Sequence {
                ids: &encodings[i].ids,
                types: &encodings[i].types,
            })
            .collect();
        let pool = |states: &[f32]| self.pool(&sequences, states);
        match &self.forward {
            Forward::Encoder(encoder) => encoder.forward(&sequences, parallelism, pool),
            #[cfg(feature = "candle")]
            Forward::Candle(candle) => candle.forward(&sequences).map(|states| pool(&states)),
        }
    }

    /// One vector per sequence from the packed token vectors.
    fn pool(&self, sequences: &[Sequence<'_>], states: &[f32]) -> Vec<Vec<f32>> {
        let mut start = 0;
        sequences
            .iter()
            .map(|sequence| {
                let end = start + sequence.ids.len() * self.dimension;
                let mut vector = self
                    .folder
                    .pooling
                    .apply(&states[start..end], self.dimension);
                start = end;
                if self.folder.normalize {
                    pooling::l2_normalize(&mut vector);
                }
                vector
            })
            .collect()
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    fn model(&self) -> &str {
        &self.inner.name
    }

    fn dimension(&self) -> usize {
        self.inner.dimension
    }

    fn max_input_tokens(&self) -> Option<usize> {
        Some(self.inner.folder.max_seq_length)
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        Some(self.inner.tokenizer.count(text))
    }

    fn release_spare_memory(&self) {
        match &self.inner.forward {
            Forward::Encoder(encoder) => encoder.release_spare_memory(),
            #[cfg(feature = "candle")]
            Forward::Candle(_) => {}
        }
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_in_turn(&self.inner.running, texts).await
    }

    async fn embed_for_reader(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_in_turn(&self.inner.reading, texts).await
    }
}

impl LocalEmbedder {
    /// Embeds on a blocking thread once `queue` lets it run.
    async fn embed_in_turn(
        &self,
        queue: &tokio::sync::Semaphore,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let _turn = queue
            .acquire()
            .await
            .map_err(|e| EmbedError::Model(format!("the embedding queue closed: {e}")))?;
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            this.embed_blocking(&refs)
        })
        .await
        .map_err(|e| EmbedError::Model(format!("the embedding task failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model_dir::default_model_dir;

    /// With every turn of the stored texts' queue taken, as when the memory
    /// worker embeds batch after batch, a query still runs; stored text
    /// waits for a turn.
    #[tokio::test]
    async fn a_query_does_not_wait_behind_stored_texts_batches() {
        let model = LocalEmbedder::load(&default_model_dir()).unwrap();
        let turns = u32::try_from(model.inner.batching.threads.max(1)).unwrap();
        let _worker = model.inner.running.acquire_many(turns).await.unwrap();
        let query = vec!["where did we go hiking last spring?".to_owned()];
        let vectors =
            tokio::time::timeout(Duration::from_secs(300), model.embed_for_reader(&query))
                .await
                .expect("the query waited behind the stored texts' queue")
                .unwrap();
        assert_eq!(vectors.len(), 1);
        assert_eq!(vectors[0].len(), model.dimension());
        // It cannot finish while the turns are held, however long it is given.
        let stored = tokio::time::timeout(Duration::from_millis(50), model.embed(&query)).await;
        assert!(stored.is_err(), "stored text ran without a turn");
    }
}
