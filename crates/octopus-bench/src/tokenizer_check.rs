//! Our WordPiece tokenizer against the `tokenizers` crate, the reference it
//! replaced in the server's build: the same ids for every text, on the
//! sentences of the workspace's dependencies' documentation and on texts
//! made to reach every step (accents, ideographs, marks, control and
//! zero-width characters, special tokens in the text, words too long).

#[cfg(test)]
mod tests {
    use std::path::Path;

    use octopus_embed::local::WordPiece;
    use tokenizers::{Tokenizer, TruncationParams};

    /// Texts that reach every branch of the tokenizer.
    const EDGES: &[&str] = &[
        "Crème brûlée at the Café Müller — naïve façade, Ångström, ŒUVRE",
        "北京欢迎你，東京もいいね。한국어도 좋아요",
        "हिन्दी में लिखा गया वाक्य, और ਪੰਜਾਬੀ ਵੀ",
        "مرحبا بالعالم! שלום עולם",
        "emoji 😀👍🏽 and flags 🇫🇷 with ZWJ 👩‍👩‍👧",
        "zero\u{200b}width\u{feff}marks\u{200d}and\u{0}nul\u{fffd}replacement",
        "tabs\tnew\nlines\r\nand\u{a0}no-break\u{3000}ideographic spaces",
        "[CLS] inside [SEP] text [MASK] and [cls] lowercase [PAD][UNK]",
        "a-very-long-hyphenated-word_with_underscores/and/slashes?query=1&x=2#frag",
        "supercalifragilisticexpialidocioussupercalifragilisticexpialidocioussupercalifragilisticexpialidocious!",
        "İstanbul ΣΊΣΥΦΟΣ ß ẞ ǅ ﬁ ﬃ Ⅻ ①②③ ½",
        "math: ∑ x² ≤ ∞ ∀ε>0 ∃δ; code: fn main() { println!(\"hi\"); }",
        "",
        "   ",
        "...!!!???",
    ];

    fn texts() -> Vec<String> {
        let lockfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
        let mut texts = crate::corpus::doc_sentences(&lockfile, 20_000).unwrap();
        texts.extend(EDGES.iter().map(|t| (*t).to_owned()));
        // Long texts, truncated where the model truncates.
        texts.push(EDGES.join(" ").repeat(20));
        texts
    }

    #[test]
    fn wordpiece_gives_the_reference_tokenizers_ids() {
        let dir = octopus_embed::model_dir::default_model_dir();
        let path = dir.join("tokenizer.json");
        let ours = WordPiece::from_file(&path).unwrap();
        let mut reference = Tokenizer::from_file(&path).unwrap();
        reference.with_padding(None);
        let max_length = 256;
        reference
            .with_truncation(Some(TruncationParams {
                max_length,
                ..Default::default()
            }))
            .unwrap();
        let mut counter = reference.clone();
        counter.with_truncation(None).unwrap();
        let texts = texts();
        assert!(texts.len() > 5_000, "a corpus of {} texts", texts.len());
        let mut differing = Vec::new();
        for text in &texts {
            let expected = reference.encode(text.as_str(), true).unwrap();
            let got = ours.encode(text, max_length);
            let counted = counter
                .encode(text.as_str(), false)
                .unwrap()
                .get_ids()
                .len();
            if got.ids != expected.get_ids()
                || got.types != expected.get_type_ids()
                || ours.count(text) != counted
            {
                differing.push(text.clone());
            }
        }
        assert!(
            differing.is_empty(),
            "{} of {} texts differ, the first: {:?}",
            differing.len(),
            texts.len(),
            differing.first()
        );
    }
}
