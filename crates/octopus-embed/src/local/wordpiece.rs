//! BERT's WordPiece tokenizer, read from a model folder's `tokenizer.json`:
//! what the sentence-transformers BERT models (all-MiniLM-L6-v2 and its
//! kin) are trained with. It does what the `tokenizers` crate does for such
//! a file, step for step, and the embedding benchmark holds the two to the
//! same ids on the benchmark corpora:
//!
//! 1. the special tokens (`[CLS]`, `[SEP]`, …) are found in the raw text and
//!    kept whole;
//! 2. the rest is normalised (`BertNormalizer`): control characters dropped,
//!    whitespace made spaces, CJK ideographs spaced apart, accents stripped
//!    (NFD, then the non-spacing marks dropped) and letters lowercased;
//! 3. split into words at whitespace, each punctuation mark a word of its
//!    own (`BertPreTokenizer`);
//! 4. each word cut into the longest pieces the vocabulary holds, the
//!    pieces after the first marked `##`, a word of none `[UNK]`;
//! 5. `[CLS]` and `[SEP]` put around, after truncating to what the model
//!    reads.
//!
//! A folder whose tokenizer is another kind is refused with its name.

use std::collections::HashMap;
use std::path::Path;

use aho_corasick::{AhoCorasick, MatchKind};
use octopus_core::embedding::EmbedError;
use serde::Deserialize;
use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::UnicodeNormalization;

/// One input's token ids and token type ids, special tokens included.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    pub ids: Vec<u32>,
    pub types: Vec<u32>,
}

/// A BERT WordPiece tokenizer.
#[derive(Clone)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    pad: u32,
    prefix: String,
    max_word_chars: usize,
    normalizer: Normalizer,
    /// The special tokens, found in the raw text before anything else.
    specials: Option<(AhoCorasick, Vec<u32>)>,
    /// The truncation and padding the file ships with (`None`: none).
    shipped_truncation: Option<usize>,
    shipped_padding: Option<Padding>,
}

/// How the file pads a batch: to a fixed length, or to its longest input.
#[derive(Clone, Copy, Debug)]
enum Padding {
    Fixed(usize),
    Longest,
}

#[derive(Clone, Copy, Debug, Deserialize)]
struct Normalizer {
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    #[serde(default)]
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

fn yes() -> bool {
    true
}

/// The parts of `tokenizer.json` read.
#[derive(Deserialize)]
struct File {
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    truncation: Option<serde_json::Value>,
    padding: Option<serde_json::Value>,
    normalizer: Option<serde_json::Value>,
    pre_tokenizer: Option<serde_json::Value>,
    model: Model,
}

#[derive(Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    vocab: HashMap<String, u32>,
    #[serde(default = "unk")]
    unk_token: String,
    #[serde(default = "prefix")]
    continuing_subword_prefix: String,
    #[serde(default = "max_word_chars")]
    max_input_chars_per_word: usize,
}

fn unk() -> String {
    "[UNK]".into()
}

fn prefix() -> String {
    "##".into()
}

fn max_word_chars() -> usize {
    100
}

impl WordPiece {
    /// Reads `tokenizer.json`.
    pub fn from_file(path: &Path) -> Result<Self, EmbedError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| EmbedError::Model(format!("read {}: {e}", path.display())))?;
        Self::from_json(&text)
            .map_err(|why| EmbedError::Model(format!("{}: {why}", path.display())))
    }

    fn from_json(text: &str) -> Result<Self, String> {
        let file: File = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if file.model.kind != "WordPiece" {
            return Err(format!(
                "the tokenizer is {}; Octopus reads BERT WordPiece tokenizers",
                file.model.kind
            ));
        }
        let kind = |part: &Option<serde_json::Value>| {
            part.as_ref()
                .and_then(|p| p["type"].as_str())
                .unwrap_or("none")
                .to_owned()
        };
        if kind(&file.pre_tokenizer) != "BertPreTokenizer" {
            return Err(format!(
                "the pre-tokenizer is {}; Octopus reads BertPreTokenizer",
                kind(&file.pre_tokenizer)
            ));
        }
        let normalizer = match &file.normalizer {
            Some(value) if value["type"] == "BertNormalizer" => {
                serde_json::from_value(value.clone()).map_err(|e| e.to_string())?
            }
            _ => {
                return Err(format!(
                    "the normalizer is {}; Octopus reads BertNormalizer",
                    kind(&file.normalizer)
                ));
            }
        };
        let mut vocab = file.model.vocab;
        for added in &file.added_tokens {
            vocab.entry(added.content.clone()).or_insert(added.id);
        }
        let id = |token: &str| {
            vocab
                .get(token)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {token}"))
        };
        let specials: Vec<&AddedToken> = file.added_tokens.iter().filter(|t| t.special).collect();
        let specials = match specials.is_empty() {
            true => None,
            false => Some((
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(specials.iter().map(|t| t.content.as_str()))
                    .map_err(|e| e.to_string())?,
                specials.iter().map(|t| t.id).collect(),
            )),
        };
        let shipped_truncation = file
            .truncation
            .as_ref()
            .and_then(|t| t["max_length"].as_u64())
            .map(|n| n as usize);
        let shipped_padding =
            file.padding
                .as_ref()
                .map(|p| match p["strategy"]["Fixed"].as_u64() {
                    Some(length) => Padding::Fixed(length as usize),
                    None => Padding::Longest,
                });
        Ok(Self {
            shipped_truncation,
            shipped_padding,
            unk: id(&file.model.unk_token)?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            pad: vocab.get("[PAD]").copied().unwrap_or(0),
            vocab,
            prefix: file.model.continuing_subword_prefix,
            max_word_chars: file.model.max_input_chars_per_word,
            normalizer,
            specials,
        })
    }

    /// The id of `[PAD]`.
    pub fn pad_id(&self) -> u32 {
        self.pad
    }

    /// `text`'s ids, truncated to `max_length` with `[CLS]` and `[SEP]`
    /// counted in.
    pub fn encode(&self, text: &str, max_length: usize) -> Encoded {
        let mut ids = self.pieces(text);
        ids.truncate(max_length.saturating_sub(2));
        let mut all = Vec::with_capacity(ids.len() + 2);
        all.push(self.cls);
        all.extend(ids);
        all.push(self.sep);
        Encoded {
            types: vec![0; all.len()],
            ids: all,
        }
    }

    /// `texts` as the file's own pipeline gives them: truncated and padded
    /// as it says. The int8 weights' activation scales are measured over
    /// sample texts given so, which is what their accuracy bar was set on.
    pub fn encode_as_shipped(&self, texts: &[&str]) -> Vec<Encoded> {
        let mut encoded: Vec<Encoded> = texts
            .iter()
            .map(|text| self.encode(text, self.shipped_truncation.unwrap_or(usize::MAX)))
            .collect();
        let width = match self.shipped_padding {
            None => return encoded,
            Some(Padding::Fixed(length)) => length,
            Some(Padding::Longest) => encoded.iter().map(|e| e.ids.len()).max().unwrap_or(0),
        };
        for e in &mut encoded {
            e.ids.resize(e.ids.len().max(width), self.pad);
            e.types.resize(e.ids.len(), 0);
        }
        encoded
    }

    /// How many tokens `text` is, without special tokens or truncation.
    pub fn count(&self, text: &str) -> usize {
        self.pieces(text).len()
    }

    /// The ids of `text`'s pieces, special tokens in the text kept whole.
    fn pieces(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut rest_from = 0;
        if let Some((finder, special_ids)) = &self.specials {
            for found in finder.find_iter(text) {
                self.words(&text[rest_from..found.start()], &mut ids);
                ids.push(special_ids[found.pattern().as_usize()]);
                rest_from = found.end();
            }
        }
        self.words(&text[rest_from..], &mut ids);
        ids
    }

    /// Normalises `text`, splits it into words and appends their pieces.
    fn words(&self, text: &str, ids: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        let normalized = self.normalizer.apply(text);
        let mut word = String::new();
        for c in normalized.chars() {
            if c.is_whitespace() {
                self.word_pieces(&word, ids);
                word.clear();
            } else if is_bert_punctuation(c) {
                self.word_pieces(&word, ids);
                word.clear();
                word.push(c);
                self.word_pieces(&word, ids);
                word.clear();
            } else {
                word.push(c);
            }
        }
        self.word_pieces(&word, ids);
    }

    /// The longest pieces of `word` the vocabulary holds, first to last;
    /// `[UNK]` when some part is in none, or the word is too long.
    fn word_pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        if word.chars().count() > self.max_word_chars {
            ids.push(self.unk);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        let mut piece = String::new();
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(&piece) {
                    found = Some(id);
                    break;
                }
                end -= word[start..end].chars().last().map_or(1, char::len_utf8);
            }
            match found {
                Some(id) => ids.push(id),
                None => {
                    ids.truncate(first);
                    ids.push(self.unk);
                    return;
                }
            }
            start = end;
        }
    }
}

impl Normalizer {
    fn apply(&self, text: &str) -> String {
        let mut out: String = text
            .chars()
            .filter(|&c| !self.clean_text || !(c == '\0' || c == '\u{fffd}' || is_control(c)))
            .map(|c| match self.clean_text && is_whitespace(c) {
                true => ' ',
                false => c,
            })
            .collect();
        if self.handle_chinese_chars && out.chars().any(is_chinese) {
            let mut spaced = String::with_capacity(out.len() + 16);
            for c in out.chars() {
                match is_chinese(c) {
                    true => {
                        spaced.push(' ');
                        spaced.push(c);
                        spaced.push(' ');
                    }
                    false => spaced.push(c),
                }
            }
            out = spaced;
        }
        if self.strip_accents.unwrap_or(self.lowercase) {
            out = out
                .nfd()
                .map(|(c, _)| c)
                .filter(|c| !c.is_mark_nonspacing())
                .collect();
        }
        if self.lowercase {
            out = out.chars().flat_map(char::to_lowercase).collect();
        }
        out
    }
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

fn is_chinese(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

fn is_bert_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> WordPiece {
        WordPiece::from_json(&file().to_string()).unwrap()
    }

    /// A small vocabulary in a `tokenizer.json` of the BERT kind.
    fn file() -> serde_json::Value {
        let vocab: Vec<&str> = vec![
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cafe", "un", "##aff", "##able",
            "!", "?", "he", "##llo", "hello", "world", "中", "文", "'", "s",
        ];
        let vocab: serde_json::Map<String, serde_json::Value> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| ((*t).to_owned(), serde_json::Value::from(i)))
            .collect();
        let added: Vec<serde_json::Value> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({"id": i, "content": t, "special": true}))
            .collect();
        serde_json::json!({
            "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                           "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": vocab},
        })
    }

    #[test]
    fn texts_as_shipped_are_truncated_and_padded_as_the_file_says() {
        let mut shipped = file();
        shipped["truncation"] = serde_json::json!({"max_length": 5});
        shipped["padding"] = serde_json::json!({"strategy": {"Fixed": 5}, "pad_id": 0});
        let t = WordPiece::from_json(&shipped.to_string()).unwrap();
        let encoded = t.encode_as_shipped(&["the", "the the the the the"]);
        assert_eq!(encoded[0].ids, [2, 5, 3, 0, 0]);
        assert_eq!(encoded[1].ids, [2, 5, 5, 5, 3]);
        assert_eq!(encoded[1].types, [0; 5]);
        assert_eq!(tokenizer().encode_as_shipped(&["the"])[0].ids, [2, 5, 3]);
    }

    #[test]
    fn words_are_cut_into_the_longest_pieces_and_wrapped_in_cls_and_sep() {
        let t = tokenizer();
        // [CLS] the un ##aff ##able cafe ! [SEP]: lowercased, accent stripped.
        assert_eq!(
            t.encode("The  unaffable CAFÉ!", 128).ids,
            [2, 5, 7, 8, 9, 6, 10, 3]
        );
        assert_eq!(t.encode("x", 128).types, [0, 0, 0]);
    }

    #[test]
    fn a_word_with_a_part_no_piece_holds_is_unknown_whole() {
        let t = tokenizer();
        assert_eq!(t.encode("unaffx hello", 128).ids, [2, 1, 14, 3]);
    }

    #[test]
    fn punctuation_ideographs_and_special_tokens_stand_alone() {
        let t = tokenizer();
        assert_eq!(t.encode("hello?world", 128).ids, [2, 14, 11, 15, 3]);
        assert_eq!(t.encode("中文", 128).ids, [2, 16, 17, 3]);
        assert_eq!(t.encode("the[SEP]the", 128).ids, [2, 5, 3, 5, 3]);
        assert_eq!(t.count("the[MASK] the"), 3);
    }

    #[test]
    fn truncation_keeps_room_for_the_special_tokens() {
        let t = tokenizer();
        assert_eq!(t.encode("the the the the", 4).ids, [2, 5, 5, 3]);
        assert_eq!(t.count("the the the the"), 4);
    }

    #[test]
    fn control_characters_go_and_other_tokenizers_are_refused() {
        let t = tokenizer();
        assert_eq!(t.encode("the\u{0}\u{200b}\tcafe", 128).ids, [2, 5, 6, 3]);
        let refused = WordPiece::from_json(r#"{"model": {"type": "BPE"}}"#)
            .err()
            .unwrap();
        assert!(refused.contains("BPE"), "{refused}");
    }
}
