//! Splitting documents into chunks for semantic memory.
//!
//! A chunk is a run of whole paragraphs (or, inside a long paragraph, whole
//! sentences; inside a very long sentence, words) of at most `max_tokens`.
//! Consecutive chunks of a section overlap by about `overlap_tokens`, so that a
//! passage cut by a boundary is whole in one of them. In Markdown, every heading
//! starts a new chunk, which remembers the heading path above it: a section's
//! chunks are about that section alone, even when the section is short. Fenced
//! code blocks are never split at blank lines nor read for headings.

/// Bounds on chunk size, in tokens of the counter given to [`chunk_text`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkingOptions {
    pub max_tokens: usize,
    pub overlap_tokens: usize,
}

impl Default for ChunkingOptions {
    /// Chunks of up to 500 tokens with 50 tokens of overlap: large enough to
    /// hold a section's point, small enough for the embedding model's window.
    fn default() -> Self {
        Self {
            max_tokens: 500,
            overlap_tokens: 50,
        }
    }
}

/// One chunk of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextChunk {
    pub text: String,
    /// The Markdown headings above the chunk's first line, outermost first,
    /// joined by " > ".
    pub heading: Option<String>,
    pub tokens: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Plain,
    Markdown,
}

/// A piece that is never split further: a paragraph, sentence or word run.
struct Unit {
    text: String,
    tokens: usize,
    heading: Option<String>,
    /// The first unit under a new heading.
    opens_section: bool,
}

/// Splits `text` into chunks; `count` measures tokens.
pub fn chunk_text(
    text: &str,
    format: Format,
    options: ChunkingOptions,
    count: &dyn Fn(&str) -> usize,
) -> Vec<TextChunk> {
    let max = options.max_tokens.max(1);
    let mut units = Vec::new();
    for block in blocks(text, format) {
        let mut opens_section = block.opens_section;
        for piece in split_to_fit(&block.text, max, count) {
            let tokens = count(&piece);
            units.push(Unit {
                text: piece,
                tokens,
                heading: block.heading.clone(),
                opens_section,
            });
            opens_section = false;
        }
    }
    pack(units, options, max)
}

struct Block {
    text: String,
    heading: Option<String>,
    opens_section: bool,
}

/// Paragraphs, with the heading path they sit under.
fn blocks(text: &str, format: Format) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut headings: Vec<(usize, String)> = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut in_fence = false;
    let mut section_opened = false;
    let heading_path = |headings: &[(usize, String)]| {
        (!headings.is_empty()).then(|| {
            headings
                .iter()
                .map(|(_, h)| h.as_str())
                .collect::<Vec<_>>()
                .join(" > ")
        })
    };
    let mut flush =
        |paragraph: &mut Vec<&str>, headings: &[(usize, String)], section_opened: &mut bool| {
            let text = paragraph.join("\n").trim().to_owned();
            paragraph.clear();
            if !text.is_empty() {
                blocks.push(Block {
                    text,
                    heading: heading_path(headings),
                    opens_section: std::mem::take(section_opened),
                });
            }
        };
    for line in text.lines() {
        let trimmed = line.trim_start();
        if format == Format::Markdown && (trimmed.starts_with("```") || trimmed.starts_with("~~~"))
        {
            in_fence = !in_fence;
            paragraph.push(line);
            continue;
        }
        if in_fence {
            paragraph.push(line);
            continue;
        }
        if format == Format::Markdown
            && let Some((level, title)) = heading(trimmed)
        {
            flush(&mut paragraph, &headings, &mut section_opened);
            headings.retain(|(l, _)| *l < level);
            headings.push((level, title.to_owned()));
            section_opened = true;
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut paragraph, &headings, &mut section_opened);
        } else {
            paragraph.push(line);
        }
    }
    flush(&mut paragraph, &headings, &mut section_opened);
    blocks
}

/// An ATX heading: `#` to `######`, a space, a title.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    let rest = &line[level..];
    ((1..=6).contains(&level) && rest.starts_with(' '))
        .then(|| (level, rest.trim().trim_end_matches('#').trim()))
}

/// `text` as pieces of at most `max` tokens: itself, else its sentences, else
/// runs of words.
fn split_to_fit(text: &str, max: usize, count: &dyn Fn(&str) -> usize) -> Vec<String> {
    if count(text) <= max {
        return vec![text.to_owned()];
    }
    let sentences = sentences(text);
    if sentences.len() > 1 {
        return sentences
            .into_iter()
            .flat_map(|s| split_to_fit(&s, max, count))
            .collect();
    }
    // One sentence longer than a chunk: cut between words.
    let mut pieces = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let candidate = if current.is_empty() {
            word.to_owned()
        } else {
            format!("{current} {word}")
        };
        if count(&candidate) > max && !current.is_empty() {
            pieces.push(std::mem::take(&mut current));
            current = word.to_owned();
        } else {
            current = candidate;
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Sentences: text up to `.`, `!` or `?` followed by white space.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?')
            && chars.peek().is_some_and(|(_, next)| next.is_whitespace())
        {
            let end = i + c.len_utf8();
            out.push(text[start..end].trim().to_owned());
            start = end;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_owned());
    }
    out.retain(|s| !s.is_empty());
    out
}

fn pack(units: Vec<Unit>, options: ChunkingOptions, max: usize) -> Vec<TextChunk> {
    let mut chunks = Vec::new();
    // Indices into `units` of the current chunk; `fresh` is where its own
    // (non-overlap) units start.
    let mut current: Vec<usize> = Vec::new();
    let mut fresh = 0;
    let tokens_of = |ids: &[usize]| ids.iter().map(|&i| units[i].tokens).sum::<usize>();
    for index in 0..units.len() {
        let full = tokens_of(&current) + units[index].tokens > max;
        if fresh < current.len() && (full || units[index].opens_section) {
            chunks.push(emit(&units, &current, fresh));
            // Carry the last units of this chunk over, up to the overlap, unless a
            // new section starts: a heading is a clean break.
            let mut carried = Vec::new();
            if !units[index].opens_section {
                let mut total = 0;
                for &i in current.iter().rev() {
                    if total + units[i].tokens > options.overlap_tokens
                        || total + units[i].tokens + units[index].tokens > max
                    {
                        break;
                    }
                    total += units[i].tokens;
                    carried.insert(0, i);
                }
            }
            fresh = carried.len();
            current = carried;
        }
        current.push(index);
    }
    if fresh < current.len() {
        chunks.push(emit(&units, &current, fresh));
    }
    chunks
}

fn emit(units: &[Unit], ids: &[usize], fresh: usize) -> TextChunk {
    TextChunk {
        text: ids
            .iter()
            .map(|&i| units[i].text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
        heading: units[ids[fresh]].heading.clone(),
        tokens: ids.iter().map(|&i| units[i].tokens).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One token per word.
    fn words(text: &str) -> usize {
        text.split_whitespace().count()
    }

    fn options(max: usize, overlap: usize) -> ChunkingOptions {
        ChunkingOptions {
            max_tokens: max,
            overlap_tokens: overlap,
        }
    }

    #[test]
    fn headings_travel_with_their_chunks() {
        let doc = "# Guide\n\nIntro text here.\n\n## Install\n\nRun the installer now.\n\n```\n# not a heading\n\nstill code\n```\n\n## Use\n\nType commands.";
        let chunks = chunk_text(doc, Format::Markdown, options(8, 0), &words);
        let headings: Vec<_> = chunks
            .iter()
            .map(|c| c.heading.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            headings,
            vec!["Guide", "Guide > Install", "Guide > Install", "Guide > Use"]
        );
        assert!(
            chunks[2].text.contains("# not a heading\n\nstill code"),
            "fenced code is kept whole: {:?}",
            chunks[2].text
        );
    }

    #[test]
    fn every_heading_starts_a_chunk() {
        let doc = "# Handbook\n\n## Leave\n\n25 days.\n\n## Expenses\n\nReceipts within two weeks.";
        let chunks = chunk_text(doc, Format::Markdown, options(500, 50), &words);
        let got: Vec<_> = chunks
            .iter()
            .map(|c| (c.heading.clone().unwrap(), c.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Handbook > Leave".to_owned(), "25 days."),
                (
                    "Handbook > Expenses".to_owned(),
                    "Receipts within two weeks."
                )
            ]
        );
    }

    #[test]
    fn long_paragraphs_split_at_sentences_then_words() {
        let doc = "One two three. Four five six. Seven eight nine ten eleven twelve thirteen.";
        let chunks = chunk_text(doc, Format::Plain, options(4, 0), &words);
        assert!(chunks.iter().all(|c| c.tokens <= 4), "{chunks:?}");
        assert_eq!(chunks[0].text, "One two three.");
        let rejoined: Vec<&str> = chunks
            .iter()
            .flat_map(|c| c.text.split_whitespace())
            .collect();
        assert_eq!(rejoined.join(" "), doc);
    }

    #[test]
    fn consecutive_chunks_overlap() {
        let doc = (0..12)
            .map(|i| format!("Sentence number {i} ends here."))
            .collect::<Vec<_>>()
            .join("\n\n");
        let chunks = chunk_text(&doc, Format::Plain, options(15, 5), &words);
        assert!(chunks.len() > 2);
        for pair in chunks.windows(2) {
            let last_of_first = pair[0].text.split("\n\n").last().unwrap();
            assert!(
                pair[1].text.starts_with(last_of_first),
                "{:?} then {:?}",
                pair[0].text,
                pair[1].text
            );
        }
    }

    proptest! {
        #[test]
        fn chunks_respect_the_maximum_and_lose_no_word(
            paragraphs in proptest::collection::vec("[a-z]{1,8}( [a-z]{1,8}){0,30}[.]", 1..20),
            max in 5usize..40,
        ) {
            let doc = paragraphs.join("\n\n");
            let chunks = chunk_text(&doc, Format::Plain, options(max, 0), &words);
            for chunk in &chunks {
                prop_assert!(chunk.tokens <= max);
                prop_assert_eq!(chunk.tokens, words(&chunk.text));
            }
            let original: Vec<&str> = doc.split_whitespace().collect();
            let rejoined: Vec<&str> = chunks.iter().flat_map(|c| c.text.split_whitespace()).collect();
            prop_assert_eq!(rejoined, original, "without overlap, chunks are the document in order");
        }
    }
}
