//! The BERT encoder's forward pass, written for sentence embedding on CPU.
//!
//! What makes it faster than a general tensor library running the same model:
//! - **No padding.** The sequences of a batch are packed one after another.
//!   Every layer but attention works token by token, so it runs over the
//!   packed rows; attention runs per sequence, over its own tokens only, so
//!   no mask is needed and no work is spent on padding.
//! - **One projection for queries, keys and values**, a single product with
//!   a weight matrix three times as wide. The attention scale 1/√d is folded
//!   into the query weights at load.
//! - **Biases and residuals inside the products**: the output is filled with
//!   them first, and the product adds to it.
//! - **No copies to rearrange heads**: each head's queries, keys and values
//!   are read in place, through strides.
//! - **Vectorised element-wise passes** (`kernels`): softmax, GELU with the
//!   exact error function, layer normalisation.

mod kernels;
mod safetensors;

use std::collections::HashMap;
use std::sync::Arc;

use octopus_core::embedding::EmbedError;
use serde::Deserialize;

use super::mapped::MappedFile;

pub use kernels::Parallelism;
pub use kernels::int8::Instructions as Int8Instructions;
use kernels::{Matrix, MatrixMut, matmul};

/// The fields of a BERT `config.json` that the forward pass needs.
#[derive(Debug, Deserialize)]
pub struct Config {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_epsilon")]
    pub layer_norm_eps: f64,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_activation")]
    pub hidden_act: String,
    #[serde(default = "default_position_type")]
    pub position_embedding_type: String,
}

fn default_epsilon() -> f64 {
    1e-12
}
fn default_type_vocab() -> usize {
    2
}
fn default_activation() -> String {
    "gelu".into()
}
fn default_position_type() -> String {
    "absolute".into()
}

/// The number format of the dense layers' weights and inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f32, as the model was trained: the reference's vectors.
    #[default]
    F32,
    /// bf16 weights and inputs with f32 sums, where the CPU multiplies bf16
    /// (AVX-512 BF16): half the bytes read and twice the products per
    /// instruction. Attention and normalisation stay in f32.
    Bf16,
    /// int8 weights (per output column) and inputs (per row) with i32 sums,
    /// on VNNI where the CPU has it (four times the f32 products per
    /// instruction, a quarter of the bytes), else on AVX2 (the bytes widened
    /// to 16 bits in registers: twice the f32 products per instruction, the
    /// same quarter of the bytes), else a scalar loop that is slower than
    /// f32. Attention and normalisation stay in f32.
    Int8,
}

impl Precision {
    /// Every precision this CPU runs, f32 first.
    pub fn available() -> Vec<Self> {
        let mut available = vec![Precision::F32];
        if kernels::bf16::supported() {
            available.push(Precision::Bf16);
        }
        if kernels::int8::accelerated() {
            available.push(Precision::Int8);
        }
        available
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
        }
    }
}

/// One input sequence: its token ids and token type ids, of equal length.
#[derive(Clone, Copy)]
pub struct Sequence<'a> {
    pub ids: &'a [u32],
    pub types: &'a [u32],
}

/// A dense layer `x · W + b`, its weight stored as `[inputs, outputs]` (the
/// transpose of the `[outputs, inputs]` in the file), so that each output
/// column is read with unit stride.
struct Dense {
    /// Empty when the layer runs in bf16 or int8.
    weight: Vec<f32>,
    narrow: Option<Narrow>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// A dense layer's weight in a narrower format than f32.
enum Narrow {
    Bf16(kernels::bf16::PackedWeight),
    Int8(kernels::int8::PackedWeight),
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    query_key_value: Dense,
    attention_output: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

impl Layer {
    /// The dense layers, in the order a forward pass multiplies them.
    fn denses(&mut self) -> [&mut Dense; 4] {
        [
            &mut self.query_key_value,
            &mut self.attention_output,
            &mut self.intermediate,
            &mut self.output,
        ]
    }
}

/// The word embeddings: a row per vocabulary entry, half of MiniLM's
/// weights. In bf16 when the products are (23 MB less resident; the
/// reference fixture's cosine stays above 0.9999); in f32, read from the
/// mapped model file when it holds them as f32 (resident only as texts
/// use their rows).
enum WordTable {
    F32(Vec<f32>),
    Bf16(Vec<u16>),
    /// Little-endian f32 rows from byte `start` of the file.
    Mapped {
        file: Arc<MappedFile>,
        start: usize,
    },
}

impl WordTable {
    fn new(words: Vec<f32>, precision: Precision) -> Self {
        match precision {
            // int8 keeps the table in f32: a row is read once per token,
            // not multiplied.
            Precision::F32 | Precision::Int8 => Self::F32(words),
            Precision::Bf16 => {
                Self::Bf16(words.iter().map(|&w| kernels::bf16::to_bf16(w)).collect())
            }
        }
    }
}

/// The working memory of one forward pass, kept between passes so that a
/// pass writes into pages already mapped: allocating them afresh for every
/// batch cost about 4% of embedding throughput in page faults. Each is sized
/// by the largest batch it has run, so at most a few megabytes per thousand
/// tokens of `Batching::max_tokens`, one per thread embedding at once.
#[derive(Default)]
struct Scratch {
    states: Vec<f32>,
    qkv: Vec<f32>,
    context: Vec<f32>,
    residual: Vec<f32>,
    intermediate: Vec<f32>,
    scores: Vec<f32>,
    /// Inputs converted for products in a narrower format.
    staged: Staged,
}

/// Inputs converted for bf16 or int8 products, kept between products.
#[derive(Default)]
struct Staged {
    pairs: Vec<u32>,
    quantised: kernels::int8::QuantisedRows,
    /// While int8 weights are being made: each product's input range.
    ranges: Option<InputRanges>,
}

/// The largest magnitude each input of each dense layer took, the layers
/// in the order a forward pass multiplies them.
#[derive(Default)]
struct InputRanges {
    layers: Vec<Vec<f32>>,
    /// The product a pass is at.
    next: usize,
}

impl InputRanges {
    fn record(&mut self, x: &[f32], inputs: usize) {
        if self.layers.len() == self.next {
            self.layers.push(vec![0.0; inputs]);
        }
        let largest = &mut self.layers[self.next];
        for row in x.chunks_exact(inputs) {
            for (m, v) in largest.iter_mut().zip(row) {
                *m = m.max(v.abs());
            }
        }
        self.next += 1;
    }
}

pub struct Encoder {
    hidden: usize,
    heads: usize,
    intermediate: usize,
    epsilon: f32,
    max_positions: usize,
    words: WordTable,
    vocabulary: usize,
    positions: Vec<f32>,
    token_types: Vec<f32>,
    type_vocabulary: usize,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    /// Scratch spaces not in use.
    scratch: std::sync::Mutex<Vec<Scratch>>,
}

fn model_error(message: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(message.to_string())
}

/// The named tensors of the file, looked up with or without the `bert.`
/// prefix that models saved with a task head carry.
struct Weights(HashMap<String, safetensors::Tensor>);

impl Weights {
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        let tensor = self
            .0
            .remove(name)
            .or_else(|| self.0.remove(&format!("bert.{name}")))
            .ok_or_else(|| model_error(format!("model.safetensors has no tensor {name}")))?;
        if tensor.shape != shape {
            return Err(model_error(format!(
                "{name} has shape {:?}, the config says {shape:?}",
                tensor.shape
            )));
        }
        Ok(tensor.values)
    }

    fn norm(&mut self, prefix: &str, width: usize) -> Result<Norm, EmbedError> {
        Ok(Norm {
            gamma: self.take(&format!("{prefix}.weight"), &[width])?,
            beta: self.take(&format!("{prefix}.bias"), &[width])?,
        })
    }

    /// Dense layers whose outputs are concatenated, each `(name, scale)`:
    /// `[outputs, inputs]` weights in the file become one `[inputs, Σ outputs]`.
    fn dense(
        &mut self,
        parts: &[(&str, f32)],
        inputs: usize,
        outputs: usize,
    ) -> Result<Dense, EmbedError> {
        let total = outputs * parts.len();
        let mut weight = vec![0f32; inputs * total];
        let mut bias = Vec::with_capacity(total);
        for (part, &(name, scale)) in parts.iter().enumerate() {
            let stored = self.take(&format!("{name}.weight"), &[outputs, inputs])?;
            for (out, row) in stored.chunks_exact(inputs).enumerate() {
                for (input, value) in row.iter().enumerate() {
                    weight[input * total + part * outputs + out] = value * scale;
                }
            }
            bias.extend(
                self.take(&format!("{name}.bias"), &[outputs])?
                    .iter()
                    .map(|b| b * scale),
            );
        }
        Ok(Dense {
            weight,
            narrow: None,
            bias,
            inputs,
            outputs: total,
        })
    }
}

impl Encoder {
    /// Builds the encoder from a `config.json` and the bytes of `model.safetensors`.
    /// `int8_sample`: texts whose input ranges shape the int8 weights
    /// (unused in f32 and bf16).
    pub fn load(
        config: &Config,
        safetensors: &[u8],
        precision: Precision,
        int8_sample: &[Sequence<'_>],
    ) -> Result<Self, EmbedError> {
        if precision == Precision::Bf16 && !kernels::bf16::supported() {
            return Err(model_error(
                "precision bf16 needs a CPU with AVX-512 BF16; this one has none (use f32)",
            ));
        }
        if config.hidden_act != "gelu" {
            return Err(model_error(format!(
                "activation {:?} is not supported (only BERT's exact \"gelu\")",
                config.hidden_act
            )));
        }
        if config.position_embedding_type != "absolute" {
            return Err(model_error(format!(
                "position embeddings {:?} are not supported (only \"absolute\")",
                config.position_embedding_type
            )));
        }
        let (hidden, heads) = (config.hidden_size, config.num_attention_heads);
        if heads == 0 || hidden % heads != 0 {
            return Err(model_error(format!(
                "hidden size {hidden} is not a multiple of {heads} attention heads"
            )));
        }
        let mut weights = Weights(safetensors::read(safetensors)?);
        let words = weights
            .0
            .get("embeddings.word_embeddings.weight")
            .or_else(|| weights.0.get("bert.embeddings.word_embeddings.weight"))
            .map(|t| t.shape.clone())
            .ok_or_else(|| model_error("model.safetensors has no word embeddings"))?;
        let vocabulary = words
            .first()
            .copied()
            .ok_or_else(|| model_error("the word embeddings have no shape"))?;
        let scale = 1.0 / ((hidden / heads) as f32).sqrt();
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let at = |name: &str| format!("encoder.layer.{i}.{name}");
            layers.push(Layer {
                query_key_value: weights.dense(
                    &[
                        (&at("attention.self.query"), scale),
                        (&at("attention.self.key"), 1.0),
                        (&at("attention.self.value"), 1.0),
                    ],
                    hidden,
                    hidden,
                )?,
                attention_output: weights.dense(
                    &[(&at("attention.output.dense"), 1.0)],
                    hidden,
                    hidden,
                )?,
                attention_norm: weights.norm(&at("attention.output.LayerNorm"), hidden)?,
                intermediate: weights.dense(
                    &[(&at("intermediate.dense"), 1.0)],
                    hidden,
                    config.intermediate_size,
                )?,
                output: weights.dense(
                    &[(&at("output.dense"), 1.0)],
                    config.intermediate_size,
                    hidden,
                )?,
                output_norm: weights.norm(&at("output.LayerNorm"), hidden)?,
            });
        }
        if precision == Precision::Bf16 {
            for dense in layers.iter_mut().flat_map(Layer::denses) {
                if let Some(packed) =
                    kernels::bf16::PackedWeight::pack(&dense.weight, dense.inputs, dense.outputs)
                {
                    dense.narrow = Some(Narrow::Bf16(packed));
                    dense.weight = Vec::new();
                }
            }
        }
        let mut encoder = Self {
            hidden,
            heads,
            intermediate: config.intermediate_size,
            epsilon: config.layer_norm_eps as f32,
            max_positions: config.max_position_embeddings,
            words: WordTable::new(
                weights.take("embeddings.word_embeddings.weight", &[vocabulary, hidden])?,
                precision,
            ),
            vocabulary,
            positions: weights.take(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, hidden],
            )?,
            token_types: weights.take(
                "embeddings.token_type_embeddings.weight",
                &[config.type_vocab_size, hidden],
            )?,
            type_vocabulary: config.type_vocab_size,
            embedding_norm: weights.norm("embeddings.LayerNorm", hidden)?,
            layers,
            scratch: std::sync::Mutex::new(Vec::new()),
        };
        if precision == Precision::Int8 {
            encoder.quantise(int8_sample)?;
        }
        Ok(encoder)
    }

    /// Runs `sample` in f32, noting each dense layer's input ranges, then
    /// quantises the layers with them: an input that BERT's activations
    /// make large on every text (a few of its 384 channels are tens of
    /// times the rest) would otherwise take most of its row's 255 steps.
    /// Each such input is scaled down and its weights up by the same
    /// factor, which the product undoes (SmoothQuant's migration, α = ½).
    fn quantise(&mut self, sample: &[Sequence<'_>]) -> Result<(), EmbedError> {
        let mut scratch = Scratch::default();
        scratch.staged.ranges = Some(InputRanges::default());
        if !sample.is_empty() {
            self.forward_in(&mut scratch, sample, Parallelism::None)?;
        }
        let ranges = scratch.staged.ranges.take().unwrap_or_default().layers;
        for (i, dense) in self.layers.iter_mut().flat_map(Layer::denses).enumerate() {
            let range = ranges.get(i).map_or(&[][..], Vec::as_slice);
            if let Some(packed) =
                kernels::int8::PackedWeight::pack(&dense.weight, dense.inputs, dense.outputs, range)
            {
                dense.narrow = Some(Narrow::Int8(packed));
                dense.weight = Vec::new();
            }
        }
        Ok(())
    }

    /// Reads the word embeddings from `file` (the model file this encoder
    /// was loaded from) instead of the copy made at load, when the file
    /// holds them as f32 and the encoder runs in f32. Returns whether it
    /// does now.
    pub fn map_words(&mut self, file: Arc<MappedFile>) -> Result<bool, EmbedError> {
        if !matches!(self.words, WordTable::F32(_)) {
            return Ok(false);
        }
        let shape = [self.vocabulary, self.hidden];
        // Where `Weights::take` found them: with or without the `bert.` prefix.
        for name in [
            "embeddings.word_embeddings.weight",
            "bert.embeddings.word_embeddings.weight",
        ] {
            if let Some(start) = safetensors::f32_offset(file.bytes(), name, &shape)? {
                self.words = WordTable::Mapped { file, start };
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// The longest sequence the position table covers.
    pub fn max_positions(&self) -> usize {
        self.max_positions
    }

    /// Runs `batch` through the encoder. Returns the last layer's token
    /// vectors, the sequences' rows one after another (`[Σ lengths, hidden]`).
    ///
    /// `threads` parallelises each matrix product; whole batches on separate
    /// threads (see `LocalEmbedder`) pass `Parallelism::None`.
    pub fn forward<R>(
        &self,
        batch: &[Sequence<'_>],
        threads: Parallelism,
        read: impl FnOnce(&[f32]) -> R,
    ) -> Result<R, EmbedError> {
        let mut scratch = self.take_scratch();
        let result = self
            .forward_in(&mut scratch, batch, threads)
            .map(|n| read(&scratch.states[..n]));
        self.scratch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(scratch);
        result
    }

    /// Drops the scratch spaces not in use (each some megabytes per
    /// thousand tokens of the largest batch it ran), and the word rows read
    /// from the mapped file so far (a burst of varied texts reads most of
    /// the table); passes after it allocate and read them again.
    pub fn release_spare_memory(&self) {
        self.scratch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        if let WordTable::Mapped { file, .. } = &self.words {
            file.release_pages();
        }
    }

    /// A scratch space from the pool, or a new one when all are in use.
    fn take_scratch(&self) -> Scratch {
        self.scratch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    /// The forward pass in `scratch`; the last layer's states are its first
    /// `n` values of `states`, `n` returned.
    fn forward_in(
        &self,
        scratch: &mut Scratch,
        batch: &[Sequence<'_>],
        threads: Parallelism,
    ) -> Result<usize, EmbedError> {
        let tokens: usize = batch.iter().map(|s| s.ids.len()).sum();
        let longest = batch.iter().map(|s| s.ids.len()).max().unwrap_or(0);
        let h = self.hidden;
        let n = tokens * h;
        self.embed_tokens(batch, &mut scratch.states)?;
        let Scratch {
            states,
            qkv,
            context,
            residual,
            intermediate,
            scores,
            staged,
        } = scratch;
        let qkv = sized(qkv, tokens * 3 * h);
        let context = sized(context, n);
        let intermediate = sized(intermediate, tokens * self.intermediate);
        let scores = sized(scores, longest * longest);
        sized(residual, n);
        for layer in &self.layers {
            dense(&layer.query_key_value, &states[..n], qkv, staged, threads);
            self.attention(batch, qkv, context, scores, threads);
            self.add_and_normalise(
                (&layer.attention_output, &layer.attention_norm),
                context,
                states,
                residual,
                n,
                staged,
                threads,
            );
            dense(
                &layer.intermediate,
                &states[..n],
                intermediate,
                staged,
                threads,
            );
            kernels::gelu(intermediate);
            self.add_and_normalise(
                (&layer.output, &layer.output_norm),
                intermediate,
                states,
                residual,
                n,
                staged,
                threads,
            );
        }
        Ok(n)
    }

    /// `states ← LayerNorm(states + x · W + b)` over the first `n` values,
    /// computed in `residual`, which then holds the old states.
    #[allow(clippy::too_many_arguments)]
    fn add_and_normalise(
        &self,
        (layer, norm): (&Dense, &Norm),
        x: &[f32],
        states: &mut Vec<f32>,
        residual: &mut Vec<f32>,
        n: usize,
        staged: &mut Staged,
        threads: Parallelism,
    ) {
        residual[..n].copy_from_slice(&states[..n]);
        dense_accumulate(layer, x, &mut residual[..n], staged, threads);
        kernels::layer_norm(&mut residual[..n], &norm.gamma, &norm.beta, self.epsilon);
        std::mem::swap(states, residual);
    }

    /// Word + position + token type embeddings, normalised.
    fn embed_tokens(
        &self,
        batch: &[Sequence<'_>],
        states: &mut Vec<f32>,
    ) -> Result<(), EmbedError> {
        let h = self.hidden;
        states.clear();
        for sequence in batch {
            if sequence.ids.len() > self.max_positions {
                return Err(EmbedError::Input(format!(
                    "{} tokens exceed the model's {} positions",
                    sequence.ids.len(),
                    self.max_positions
                )));
            }
            for (position, (&id, &kind)) in sequence.ids.iter().zip(sequence.types).enumerate() {
                let (id, kind) = (id as usize, kind as usize);
                if id >= self.vocabulary || kind >= self.type_vocabulary {
                    return Err(EmbedError::Input(format!(
                        "token {id} of type {kind} is outside the model's vocabulary"
                    )));
                }
                let place = &self.positions[position * h..(position + 1) * h];
                let kind = &self.token_types[kind * h..(kind + 1) * h];
                let sum = |((w, p), k): ((f32, &f32), &f32)| w + p + k;
                match &self.words {
                    WordTable::F32(words) => {
                        let word = words[id * h..(id + 1) * h].iter().copied();
                        states.extend(word.zip(place).zip(kind).map(sum));
                    }
                    WordTable::Bf16(words) => {
                        let word = words[id * h..(id + 1) * h]
                            .iter()
                            .map(|&w| f32::from_bits(u32::from(w) << 16));
                        states.extend(word.zip(place).zip(kind).map(sum));
                    }
                    WordTable::Mapped { file, start } => {
                        let row = start + id * h * 4;
                        let word = file.bytes()[row..row + h * 4]
                            .chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                        states.extend(word.zip(place).zip(kind).map(sum));
                    }
                }
            }
        }
        kernels::layer_norm(
            states,
            &self.embedding_norm.gamma,
            &self.embedding_norm.beta,
            self.epsilon,
        );
        Ok(())
    }

    /// Self-attention of each sequence over its own tokens, each head read in
    /// place from the packed query/key/value rows and written in place into
    /// `context`.
    fn attention(
        &self,
        batch: &[Sequence<'_>],
        qkv: &[f32],
        context: &mut [f32],
        scores: &mut [f32],
        threads: Parallelism,
    ) {
        let h = self.hidden;
        let width = h / self.heads;
        let stride = 3 * h;
        let mut start = 0;
        for sequence in batch {
            let length = sequence.ids.len();
            let rows = &qkv[start * stride..(start + length) * stride];
            let out = &mut context[start * h..(start + length) * h];
            let scores = &mut scores[..length * length];
            for head in 0..self.heads {
                let column = head * width;
                let queries = Matrix {
                    data: &rows[column..],
                    rows: length,
                    cols: width,
                    row_stride: stride,
                    col_stride: 1,
                };
                // Keys transposed by their strides: element (d, j) is key j's d-th value.
                let keys = Matrix {
                    data: &rows[h + column..],
                    rows: width,
                    cols: length,
                    row_stride: 1,
                    col_stride: stride,
                };
                let values = Matrix {
                    data: &rows[2 * h + column..],
                    rows: length,
                    cols: width,
                    row_stride: stride,
                    col_stride: 1,
                };
                matmul(
                    MatrixMut::rows(scores, length, length),
                    false,
                    queries,
                    keys,
                    threads,
                );
                kernels::softmax_rows(scores, length);
                let head_out = MatrixMut {
                    data: &mut out[column..],
                    rows: length,
                    cols: width,
                    row_stride: h,
                    col_stride: 1,
                };
                matmul(
                    head_out,
                    false,
                    Matrix::rows(scores, length, length),
                    values,
                    threads,
                );
            }
            start += length;
        }
    }
}

/// The first `len` values of `buffer`, grown when it is shorter. Values
/// are left as they were: every caller writes before it reads.
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}

/// `out = x · W + b`. `staged` is room for inputs in a narrower format.
fn dense(layer: &Dense, x: &[f32], out: &mut [f32], staged: &mut Staged, threads: Parallelism) {
    for row in out.chunks_exact_mut(layer.outputs) {
        row.copy_from_slice(&layer.bias);
    }
    product(layer, x, out, staged, threads);
}

/// `out += x · W + b`.
fn dense_accumulate(
    layer: &Dense,
    x: &[f32],
    out: &mut [f32],
    staged: &mut Staged,
    threads: Parallelism,
) {
    kernels::add_to_rows(out, &layer.bias);
    product(layer, x, out, staged, threads);
}

fn product(layer: &Dense, x: &[f32], out: &mut [f32], staged: &mut Staged, threads: Parallelism) {
    if let Some(ranges) = &mut staged.ranges {
        ranges.record(x, layer.inputs);
    }
    match &layer.narrow {
        Some(Narrow::Bf16(weight)) => {
            return kernels::bf16::matmul(out, x, weight, &mut staged.pairs);
        }
        Some(Narrow::Int8(weight)) => {
            return kernels::int8::matmul(out, x, weight, &mut staged.quantised);
        }
        None => {}
    }
    let rows = x.len() / layer.inputs;
    matmul(
        MatrixMut::rows(out, rows, layer.outputs),
        true,
        Matrix::rows(x, rows, layer.inputs),
        Matrix::rows(&layer.weight, layer.inputs, layer.outputs),
        threads,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default model's encoder, its word table copied at load.
    fn default_encoder(file: &MappedFile) -> Encoder {
        let dir = crate::model_dir::default_model_dir();
        let config: Config =
            serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
        Encoder::load(&config, file.bytes(), Precision::F32, &[]).unwrap()
    }

    #[test]
    fn word_rows_read_from_the_mapped_file_give_the_same_states_bit_for_bit() {
        let dir = crate::model_dir::default_model_dir();
        let file = Arc::new(MappedFile::open(&dir.join("model.safetensors")).unwrap());
        let copied = default_encoder(&file);
        let mut mapped = default_encoder(&file);
        assert!(mapped.map_words(Arc::clone(&file)).unwrap());
        assert!(matches!(mapped.words, WordTable::Mapped { .. }));
        file.release_pages();
        // The first and last rows of the vocabulary, and some between.
        let last = u32::try_from(copied.vocabulary - 1).unwrap();
        let ids = [101, 0, 7592, 2088, last, 102];
        let types = [0; 6];
        let batch = [Sequence {
            ids: &ids,
            types: &types,
        }];
        let states = |encoder: &Encoder| {
            encoder
                .forward(&batch, Parallelism::None, <[f32]>::to_vec)
                .unwrap()
        };
        let (expected, found) = (states(&copied), states(&mapped));
        assert_eq!(found.len(), ids.len() * copied.hidden);
        assert!(
            expected
                .iter()
                .zip(&found)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }

    #[test]
    fn spare_memory_released_is_made_and_read_again_by_the_next_pass() {
        let dir = crate::model_dir::default_model_dir();
        let file = Arc::new(MappedFile::open(&dir.join("model.safetensors")).unwrap());
        let mut encoder = default_encoder(&file);
        assert!(encoder.map_words(Arc::clone(&file)).unwrap());
        let (ids, types) = ([101, 7592, 102], [0; 3]);
        let batch = [Sequence {
            ids: &ids,
            types: &types,
        }];
        let pass = || {
            encoder
                .forward(&batch, Parallelism::None, <[f32]>::to_vec)
                .unwrap()
        };
        let pooled = || encoder.scratch.lock().unwrap().len();
        let first = pass();
        assert_eq!(pooled(), 1);
        encoder.release_spare_memory();
        assert_eq!(pooled(), 0);
        assert_eq!(pass(), first);
        assert_eq!(pooled(), 1);
    }

    #[test]
    fn a_word_table_the_file_does_not_hold_as_f32_stays_a_copy() {
        let dir = crate::model_dir::default_model_dir();
        let file = Arc::new(MappedFile::open(&dir.join("model.safetensors")).unwrap());
        let mut encoder = default_encoder(&file);
        // A file without the table where the encoder expects it.
        encoder.vocabulary += 1;
        assert!(!encoder.map_words(Arc::clone(&file)).unwrap());
        assert!(matches!(encoder.words, WordTable::F32(_)));
    }
}
