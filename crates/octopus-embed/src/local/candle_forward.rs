//! candle's BERT forward pass, kept only to measure the encoder against it
//! (`octopus-bench embed`, feature `candle`): the implementation Octopus ran
//! before it had its own.

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use octopus_core::embedding::EmbedError;

use super::encoder::Sequence;

fn model_error(context: &str) -> impl Fn(candle_core::Error) -> EmbedError + '_ {
    move |error| EmbedError::Model(format!("{context}: {error}"))
}

pub struct CandleForward {
    model: BertModel,
    pad_id: u32,
}

impl CandleForward {
    pub fn load(config_text: &str, safetensors: &[u8], pad_id: u32) -> Result<Self, EmbedError> {
        let config: Config = serde_json::from_str(config_text)
            .map_err(|e| EmbedError::Model(format!("parse config.json: {e}")))?;
        let mut tensors: HashMap<String, Tensor> =
            candle_core::safetensors::load_buffer(safetensors, &Device::Cpu)
                .map_err(model_error("load the weights"))?;
        // Each dense weight laid out as its transpose, viewed back as [out, in]:
        // candle then multiplies without packing it again on every call.
        for (name, tensor) in tensors.iter_mut() {
            if name.ends_with(".weight") && name.contains("encoder.layer.") && tensor.rank() == 2 {
                *tensor = tensor
                    .to_dtype(DType::F32)
                    .and_then(|t| t.t()?.contiguous()?.t())
                    .map_err(model_error("lay out the weights"))?;
            }
        }
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let model = BertModel::load(vb, &config).map_err(model_error("build the model"))?;
        Ok(Self { model, pad_id })
    }

    /// The token vectors of each sequence, packed as the encoder returns them.
    pub fn forward(&self, batch: &[Sequence<'_>]) -> Result<Vec<f32>, EmbedError> {
        let rows = batch.len();
        let width = batch.iter().map(|s| s.ids.len()).max().unwrap_or(0);
        let (mut ids, mut types, mut mask) = (Vec::new(), Vec::new(), Vec::new());
        for sequence in batch {
            let padding = width - sequence.ids.len();
            ids.extend(
                sequence
                    .ids
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(self.pad_id, padding)),
            );
            types.extend(
                sequence
                    .types
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, padding)),
            );
            mask.extend(
                std::iter::repeat_n(1u32, sequence.ids.len())
                    .chain(std::iter::repeat_n(0, padding)),
            );
        }
        let tensor = |data: Vec<u32>| {
            Tensor::from_vec(data, (rows, width), &Device::Cpu).map_err(model_error("build inputs"))
        };
        let states = self
            .model
            .forward(&tensor(ids)?, &tensor(types)?, Some(&tensor(mask)?))
            .and_then(|t| t.to_vec3::<f32>())
            .map_err(model_error("run the model"))?;
        Ok(batch
            .iter()
            .zip(states)
            .flat_map(|(sequence, rows)| rows.into_iter().take(sequence.ids.len()).flatten())
            .collect())
    }
}
