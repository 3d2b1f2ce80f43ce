"""Reference token counts from OpenAI's tiktoken, for Octopus's counting test.

Usage: TIKTOKEN_CACHE_DIR=DIR python token_counts.py OUT.json
tiktoken fetches its encoding files from the network; DIR must already hold
them under tiktoken's cache names (sha1 of the URL). tiktoken checks their
SHA-256 against the official files before use.
"""
import json
import sys

import tiktoken

TEXTS = [
    "",
    "hi",
    "Where is my order ORD-8821? It shipped with FedEx on 2024-03-05.",
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted.",
    "Le café était fermé, alors nous sommes allés au parc. Ça m'a plu !",
    "async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;",
    "🐙 Octopuses have three hearts and blue blood. 日本語のテキストも数えます。",
    "    indented code\n\ttabs\n\n\nblank lines   trailing spaces   ",
    "<|endoftext|> is only text here, never a special token.",
]


def main() -> None:
    encodings = {name: tiktoken.get_encoding(name) for name in ["cl100k_base", "o200k_base"]}
    fixture = {
        "generator": "tiktoken " + tiktoken.__version__,
        "texts": TEXTS,
        "counts": {
            name: [len(enc.encode(t, disallowed_special=())) for t in TEXTS]
            for name, enc in encodings.items()
        },
    }
    with open(sys.argv[1], "w") as f:
        json.dump(fixture, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
