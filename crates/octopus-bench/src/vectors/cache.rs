//! Real embeddings of the documentation corpus, computed once and kept on disk:
//! embedding 100k sentences takes minutes, reading them back takes a second.

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use octopus_embed::local::LocalEmbedder;

/// Vectors in one flat array, `dimension` floats each.
pub struct Vectors {
    pub dimension: usize,
    pub data: Vec<f32>,
}

impl Vectors {
    pub fn len(&self) -> usize {
        self.data.len() / self.dimension
    }

    pub fn get(&self, at: usize) -> &[f32] {
        &self.data[at * self.dimension..(at + 1) * self.dimension]
    }

    /// The first `count` vectors.
    pub fn prefix(&self, count: usize) -> Vectors {
        Vectors {
            dimension: self.dimension,
            data: self.data[..count.min(self.len()) * self.dimension].to_vec(),
        }
    }

    pub fn rows(&self) -> std::slice::ChunksExact<'_, f32> {
        self.data.chunks_exact(self.dimension)
    }
}

/// The corpus of `count` sentences kept in `cache_dir`, or made by `make` and
/// kept there. Kept because the sentences come from the dependencies' docs, and
/// a change of dependencies would otherwise change the corpus and force the
/// embeddings to be computed again.
pub fn corpus(
    cache_dir: &Path,
    count: usize,
    make: impl FnOnce() -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<Vec<String>> {
    let file = cache_dir.join(format!("doc-sentences-{count}.json"));
    if let Ok(bytes) = std::fs::read(&file)
        && let Ok(texts) = serde_json::from_slice::<Vec<String>>(&bytes)
        && texts.len() == count
    {
        return Ok(texts);
    }
    let texts = make()?;
    std::fs::create_dir_all(cache_dir)
        .with_context(|| format!("create {}", cache_dir.display()))?;
    std::fs::write(&file, serde_json::to_vec(&texts)?)
        .with_context(|| format!("write {}", file.display()))?;
    Ok(texts)
}

/// The embeddings of `texts` by the model in `model_dir`, from `cache_dir` when a
/// file there was made from the same texts and model.
pub fn embeddings(texts: &[String], model_dir: &Path, cache_dir: &Path) -> anyhow::Result<Vectors> {
    let file = cache_file(texts, model_dir, cache_dir);
    if let Ok(bytes) = std::fs::read(&file) {
        let (header, body) = bytes.split_at(8.min(bytes.len()));
        let dimension = u64::from_le_bytes(header.try_into().unwrap_or([0; 8])) as usize;
        if dimension > 0 && body.len() == texts.len() * dimension * 4 {
            eprintln!(
                "vectors: read {} embeddings from {}",
                texts.len(),
                file.display()
            );
            let data = body
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            return Ok(Vectors { dimension, data });
        }
    }
    let model = LocalEmbedder::load(model_dir)?;
    let mut data = Vec::new();
    let started = std::time::Instant::now();
    for (done, batch) in texts.chunks(1024).enumerate() {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        for vector in model.embed_blocking(&refs)? {
            data.extend(vector);
        }
        let done = ((done + 1) * 1024).min(texts.len());
        eprintln!(
            "vectors: embedded {done}/{} ({:.0}/s)",
            texts.len(),
            done as f64 / started.elapsed().as_secs_f64()
        );
    }
    let dimension = data.len() / texts.len().max(1);
    ensure!(dimension > 0, "the model returned no vectors");
    std::fs::create_dir_all(cache_dir)
        .with_context(|| format!("create {}", cache_dir.display()))?;
    let mut bytes = (dimension as u64).to_le_bytes().to_vec();
    bytes.extend(data.iter().flat_map(|x| x.to_le_bytes()));
    let partial = file.with_extension("partial");
    std::fs::write(&partial, bytes).with_context(|| format!("write {}", partial.display()))?;
    std::fs::rename(&partial, &file)?;
    Ok(Vectors { dimension, data })
}

/// Named after a hash of the texts and the model folder, so a changed corpus or
/// model never reads stale vectors.
fn cache_file(texts: &[String], model_dir: &Path, cache_dir: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    // `DefaultHasher::new` has fixed keys: the same name on every run of a build.
    let mut hasher = std::hash::DefaultHasher::new();
    texts.hash(&mut hasher);
    model_dir.hash(&mut hasher);
    cache_dir.join(format!(
        "embeddings-{}-{:016x}.f32",
        texts.len(),
        hasher.finish()
    ))
}
