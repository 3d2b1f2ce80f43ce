//! Counting tokens the way the agent's model will.
//!
//! OpenAI models are counted exactly with their own encodings (tiktoken's
//! `o200k_base` for the GPT-4o generation and later, `cl100k_base` for GPT-4
//! and GPT-3.5), embedded in the binary. Anthropic's tokenizer is not published,
//! and Ollama serves many model families: for those the count is `cl100k_base`
//! plus 10%, rounded up. Claude and Llama tokenizers split English into a few
//! more pieces than cl100k does, and a budget must not be overrun, so the
//! margin errs on the side of counting too many.
//!
//! A context is counted many times as it is pruned, and its words repeat
//! from turn to turn, so a text is counted in pieces that the encodings'
//! pre-tokenisers never join (see [`pieces`]), each piece's count kept in a
//! bounded table: the sum is the exact count of the whole, and a piece seen
//! before costs a lookup instead of a regex pass and a BPE.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use octopus_core::agent::LlmProvider;
use octopus_core::tokens::TokenCounter;
use tiktoken_rs::CoreBPE;

/// How a model's tokens are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokenizer {
    /// Exact: GPT-4o, GPT-4.1, GPT-5, o-series.
    O200k,
    /// Exact: GPT-4, GPT-3.5, OpenAI embedding models.
    Cl100k,
    /// `cl100k_base` plus 10%: Anthropic, Ollama, and unknown models.
    Estimated,
}

impl Tokenizer {
    pub fn for_model(provider: LlmProvider, model: &str) -> Self {
        let model = model.to_ascii_lowercase();
        match provider {
            LlmProvider::Openai | LlmProvider::AzureOpenai => {
                let older = ["gpt-4-", "gpt-3.5", "text-embedding", "gpt-35"];
                if model == "gpt-4" || older.iter().any(|p| model.starts_with(p)) {
                    Self::Cl100k
                } else {
                    // gpt-4o, gpt-4.1, gpt-5, o1/o3/o4 and whatever OpenAI
                    // ships next all use o200k.
                    Self::O200k
                }
            }
            LlmProvider::Anthropic | LlmProvider::Ollama => Self::Estimated,
        }
    }

    /// How the trace names it.
    pub fn name(self) -> &'static str {
        match self {
            Self::O200k => "o200k_base",
            Self::Cl100k => "cl100k_base",
            Self::Estimated => "cl100k_base+10%",
        }
    }

    fn encoding(self) -> Encoding {
        match self {
            Self::O200k => Encoding::O200k,
            Self::Cl100k | Self::Estimated => Encoding::Cl100k,
        }
    }
}

/// The two encodings counted with, each with its table of counted pieces.
#[derive(Clone, Copy)]
enum Encoding {
    O200k,
    Cl100k,
}

/// Pieces whose counts are kept, in all; past it the table starts over (a
/// bound on memory, a few megabytes, not an eviction policy).
const MAX_KEPT_PIECES: usize = 200_000;
/// Longer pieces (a link, an encoded blob) are counted each time, not kept.
const MAX_KEPT_PIECE_BYTES: usize = 64;

type Counted = Mutex<HashMap<Box<str>, u32>>;

static O200K_PIECES: LazyLock<Counted> = LazyLock::new(Default::default);
static CL100K_PIECES: LazyLock<Counted> = LazyLock::new(Default::default);

impl Encoding {
    fn bpe(self) -> &'static CoreBPE {
        match self {
            Self::O200k => tiktoken_rs::o200k_base_singleton(),
            Self::Cl100k => tiktoken_rs::cl100k_base_singleton(),
        }
    }

    fn kept(self) -> std::sync::MutexGuard<'static, HashMap<Box<str>, u32>> {
        let table = match self {
            Self::O200k => &O200K_PIECES,
            Self::Cl100k => &CL100K_PIECES,
        };
        table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The exact number of tokens of `text` (ordinary encoding: a special
    /// token typed by a user is text).
    fn count(self, text: &str) -> usize {
        let pieces = pieces(text);
        let mut total = 0;
        let mut unknown = Vec::new();
        {
            let kept = self.kept();
            for piece in pieces {
                match kept.get(piece) {
                    Some(count) => total += *count as usize,
                    None => unknown.push(piece),
                }
            }
        }
        if unknown.is_empty() {
            return total;
        }
        let counted: Vec<(&str, usize)> = unknown
            .into_iter()
            .map(|piece| (piece, self.bpe().encode_ordinary(piece).len()))
            .collect();
        total += counted.iter().map(|(_, count)| count).sum::<usize>();
        let mut kept = self.kept();
        if kept.len() + counted.len() > MAX_KEPT_PIECES {
            kept.clear();
        }
        for (piece, count) in counted {
            if piece.len() <= MAX_KEPT_PIECE_BYTES
                && let Ok(count) = u32::try_from(count)
            {
                kept.insert(piece.into(), count);
            }
        }
        total
    }
}

/// `text` cut where cl100k's and o200k's pre-tokenising patterns always
/// end one chunk and start the next, so that the tokens of the whole are
/// the pieces' tokens end to end:
/// - before a space that follows anything but whitespace: no chunk holds
///   a non-space character followed by a space (a chunk may only start
///   with one), and the patterns look at nothing behind a match;
/// - after a line break followed by anything but whitespace or `/`: the
///   run of line breaks a chunk may end with stops there (o200k's
///   punctuation chunk also takes the slashes after it).
fn pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let Some(&(next_at, next)) = chars.peek() else {
            break;
        };
        let cut = match (c, next) {
            ('\n', next) => !next.is_whitespace() && next != '/',
            (c, ' ') => !c.is_whitespace(),
            _ => false,
        };
        if cut {
            debug_assert_eq!(next_at, at + c.len_utf8());
            pieces.push(&text[start..next_at]);
            start = next_at;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Counts with a model's [`Tokenizer`].
#[derive(Clone, Copy, Debug)]
pub struct ModelTokenCounter {
    tokenizer: Tokenizer,
}

impl ModelTokenCounter {
    pub fn new(tokenizer: Tokenizer) -> Self {
        Self { tokenizer }
    }

    pub fn for_model(provider: LlmProvider, model: &str) -> Self {
        Self::new(Tokenizer::for_model(provider, model))
    }

    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }
}

impl TokenCounter for ModelTokenCounter {
    fn count(&self, text: &str) -> u32 {
        // Ordinary encoding: `<|endoftext|>` typed by a user is text, not a
        // special token.
        let counted = self.tokenizer.encoding().count(text);
        let tokens = match self.tokenizer {
            Tokenizer::Estimated => (counted * 11).div_ceil(10),
            Tokenizer::O200k | Tokenizer::Cl100k => counted,
        };
        u32::try_from(tokens).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Fixture {
        texts: Vec<String>,
        counts: std::collections::HashMap<String, Vec<u32>>,
    }

    /// Counts from OpenAI's tiktoken (`scripts/reference/token_counts.py`).
    #[test]
    fn openai_counts_match_tiktoken_exactly() {
        let fixture: Fixture =
            serde_json::from_str(include_str!("../tests/fixtures/tiktoken-counts.json")).unwrap();
        for (name, tokenizer) in [
            ("cl100k_base", Tokenizer::Cl100k),
            ("o200k_base", Tokenizer::O200k),
        ] {
            let counter = ModelTokenCounter::new(tokenizer);
            for (text, expected) in fixture.texts.iter().zip(&fixture.counts[name]) {
                assert_eq!(counter.count(text), *expected, "{name}: {text:?}");
            }
        }
    }

    /// The sum of the pieces' counts is the count of the whole, for both
    /// encodings, over texts made of what moves a pre-tokeniser: letters of
    /// several scripts and cases, marks, digits, punctuation, slashes,
    /// apostrophes, spaces, tabs and line breaks, in random runs.
    #[test]
    fn counting_in_pieces_gives_the_whole_texts_count() {
        let alphabet: Vec<&str> = vec![
            "a",
            "Word",
            "the",
            "ÉTÉ",
            "naïve",
            "e\u{301}",
            "日本",
            "Привет",
            "😀",
            "7",
            "2023",
            "12345",
            ".",
            ",",
            "!",
            "?",
            "[",
            "]",
            "(",
            ")",
            "'s",
            "'",
            "\"",
            "/",
            "//",
            "-",
            ":",
            " ",
            "  ",
            "\t",
            "\n",
            "\n\n",
            "\r\n",
            " \n",
            "\u{a0}",
            "<|endoftext|>",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for encoding in [Encoding::Cl100k, Encoding::O200k] {
            for _ in 0..3_000 {
                let length = 1 + next() % 40;
                let text: String = (0..length)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                let whole = encoding.bpe().encode_ordinary(&text).len();
                assert_eq!(encoding.count(&text), whole, "{text:?}");
                // Counted again, from the table.
                assert_eq!(encoding.count(&text), whole, "{text:?}");
            }
        }
    }

    #[test]
    fn a_text_is_cut_before_spaces_and_after_line_breaks() {
        assert_eq!(
            pieces("[2] (bob) I went.\nThen  home\n/x"),
            vec!["[2]", " (bob)", " I", " went.\n", "Then", "  home\n/x"]
        );
        assert_eq!(pieces(""), Vec::<&str>::new());
        assert_eq!(pieces(" a"), vec![" a"]);
    }

    #[test]
    fn models_map_to_their_encodings() {
        use LlmProvider::*;
        assert_eq!(
            Tokenizer::for_model(Openai, "gpt-4o-mini"),
            Tokenizer::O200k
        );
        assert_eq!(
            Tokenizer::for_model(AzureOpenai, "GPT-4.1"),
            Tokenizer::O200k
        );
        assert_eq!(Tokenizer::for_model(Openai, "o3-mini"), Tokenizer::O200k);
        assert_eq!(Tokenizer::for_model(Openai, "gpt-4"), Tokenizer::Cl100k);
        assert_eq!(
            Tokenizer::for_model(Openai, "gpt-4-turbo"),
            Tokenizer::Cl100k
        );
        assert_eq!(
            Tokenizer::for_model(AzureOpenai, "gpt-35-turbo"),
            Tokenizer::Cl100k
        );
        assert_eq!(
            Tokenizer::for_model(Anthropic, "claude-sonnet-4"),
            Tokenizer::Estimated
        );
        assert_eq!(
            Tokenizer::for_model(Ollama, "llama3.1"),
            Tokenizer::Estimated
        );
    }

    #[test]
    fn estimates_round_up_a_ten_percent_margin() {
        let text = "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted.";
        let exact = ModelTokenCounter::new(Tokenizer::Cl100k).count(text);
        let estimated = ModelTokenCounter::new(Tokenizer::Estimated).count(text);
        assert_eq!(exact, 19);
        assert_eq!(estimated, 21, "19 × 1.1 = 20.9, rounded up");
        assert_eq!(ModelTokenCounter::new(Tokenizer::Estimated).count(""), 0);
    }
}
