//! Reading a `.safetensors` file: an 8-byte little-endian header length, a
//! JSON header naming each tensor's type, shape and byte range, then the data.

use std::collections::HashMap;

use octopus_core::embedding::EmbedError;
use serde::Deserialize;

/// One tensor, converted to f32.
pub struct Tensor {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

fn invalid(message: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(format!("model.safetensors: {message}"))
}

/// The header's entries by name, and where the data begins in `bytes`.
fn header(bytes: &[u8]) -> Result<(HashMap<String, serde_json::Value>, usize), EmbedError> {
    let header_length = bytes
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| invalid("shorter than its header"))?;
    let data_start = usize::try_from(header_length)
        .ok()
        .and_then(|n| n.checked_add(8))
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| invalid("header length beyond the file"))?;
    let mut entries: HashMap<String, serde_json::Value> =
        serde_json::from_slice(&bytes[8..data_start]).map_err(invalid)?;
    entries.remove("__metadata__");
    Ok((entries, data_start))
}

/// Where the f32 tensor `name` lies in `bytes` (little-endian, as the
/// format stores it), when it is one of `shape`: the byte offset of its
/// first value. `None` when it is absent, of another type or shape, or
/// beyond the file.
pub fn f32_offset(bytes: &[u8], name: &str, shape: &[usize]) -> Result<Option<usize>, EmbedError> {
    let (mut entries, data_start) = header(bytes)?;
    let Some(entry) = entries.remove(name) else {
        return Ok(None);
    };
    let entry: Entry =
        serde_json::from_value(entry).map_err(|e| invalid(format!("{name}: {e}")))?;
    let [start, end] = entry.data_offsets;
    let fits = entry.dtype == "F32"
        && entry.shape == shape
        && end.checked_sub(start) == Some(shape.iter().product::<usize>() * 4)
        && data_start + end <= bytes.len();
    Ok(fits.then_some(data_start + start))
}

/// Every floating-point tensor in `bytes`, by name, as f32. Integer tensors
/// (some folders store BERT's position ids) are skipped.
pub fn read(bytes: &[u8]) -> Result<HashMap<String, Tensor>, EmbedError> {
    let (header, data_start) = header(bytes)?;
    let data = &bytes[data_start..];
    let mut tensors = HashMap::new();
    for (name, entry) in header {
        let entry: Entry =
            serde_json::from_value(entry).map_err(|e| invalid(format!("{name}: {e}")))?;
        let [start, end] = entry.data_offsets;
        let raw = data
            .get(start..end)
            .ok_or_else(|| invalid(format!("{name}: data beyond the file")))?;
        let values: Vec<f32> = match entry.dtype.as_str() {
            "F32" => raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            "F16" => raw
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            "BF16" => raw
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            _ => continue,
        };
        if values.len() != entry.shape.iter().product::<usize>() {
            return Err(invalid(format!(
                "{name}: shape {:?} does not match its data",
                entry.shape
            )));
        }
        tensors.insert(
            name,
            Tensor {
                shape: entry.shape,
                values,
            },
        );
    }
    Ok(tensors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn reads_each_float_type_as_f32_and_skips_integers() {
        let mut data = Vec::new();
        data.extend_from_slice(&1.5f32.to_le_bytes());
        data.extend_from_slice(&(-2.0f32).to_le_bytes());
        data.extend_from_slice(&half::f16::from_f32(0.25).to_le_bytes());
        data.extend_from_slice(&half::bf16::from_f32(3.0).to_le_bytes());
        data.extend_from_slice(&7i64.to_le_bytes());
        let header = r#"{"__metadata__":{"format":"pt"},
            "a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
            "b":{"dtype":"F16","shape":[1],"data_offsets":[8,10]},
            "c":{"dtype":"BF16","shape":[1,1],"data_offsets":[10,12]},
            "ids":{"dtype":"I64","shape":[1],"data_offsets":[12,20]}}"#;
        let tensors = read(&file(header, &data)).unwrap();
        assert_eq!(tensors["a"].values, [1.5, -2.0]);
        assert_eq!(tensors["b"].values, [0.25]);
        assert_eq!(tensors["c"].values, [3.0]);
        assert_eq!(tensors["c"].shape, [1, 1]);
        assert!(!tensors.contains_key("ids"));
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_the_problem() {
        let header = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
        let error = read(&file(header, &[0; 8])).err().unwrap().to_string();
        assert!(error.contains("a: data beyond the file"), "{error}");
        let header = r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#;
        let error = read(&file(header, &[0; 8])).err().unwrap().to_string();
        assert!(error.contains("does not match"), "{error}");
        assert!(read(&[1, 0]).is_err());
        assert!(read(&[255; 16]).is_err());
    }

    #[test]
    fn an_f32_tensor_is_located_only_with_its_type_and_shape() {
        let mut data = vec![0u8; 4];
        data.extend_from_slice(&2.5f32.to_le_bytes());
        data.extend_from_slice(&(-1.0f32).to_le_bytes());
        let header = r#"{"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},
            "w":{"dtype":"F32","shape":[1,2],"data_offsets":[4,12]}}"#;
        let bytes = file(header, &data);
        let at = f32_offset(&bytes, "w", &[1, 2]).unwrap().unwrap();
        assert_eq!(bytes[at..at + 4], 2.5f32.to_le_bytes());
        assert_eq!(bytes[at + 4..at + 8], (-1.0f32).to_le_bytes());
        assert_eq!(f32_offset(&bytes, "w", &[2, 1]).unwrap(), None);
        assert_eq!(f32_offset(&bytes, "h", &[2]).unwrap(), None);
        assert_eq!(f32_offset(&bytes, "missing", &[1]).unwrap(), None);
        let beyond = r#"{"w":{"dtype":"F32","shape":[1,2],"data_offsets":[8,16]}}"#;
        assert_eq!(
            f32_offset(&file(beyond, &data), "w", &[1, 2]).unwrap(),
            None
        );
    }
}
