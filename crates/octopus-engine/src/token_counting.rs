//! Counting tokens the way the agent's model will.
//!
//! OpenAI models are counted exactly with their own encodings (tiktoken's
//! `o200k_base` for the GPT-4o generation and later, `cl100k_base` for GPT-4
//! and GPT-3.5), embedded in the binary. Anthropic's tokenizer is not published,
//! and Ollama serves many model families: for those the count is `cl100k_base`
//! plus 10%, rounded up. Claude and Llama tokenizers split English into a few
//! more pieces than cl100k does, and a budget must not be overrun, so the
//! margin errs on the side of counting too many.

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

    fn encoding(self) -> &'static CoreBPE {
        match self {
            Self::O200k => tiktoken_rs::o200k_base_singleton(),
            Self::Cl100k | Self::Estimated => tiktoken_rs::cl100k_base_singleton(),
        }
    }
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
        let counted = self.tokenizer.encoding().encode_ordinary(text).len();
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
