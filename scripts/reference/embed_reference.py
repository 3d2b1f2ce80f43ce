"""Reference vectors from sentence-transformers, for Octopus's embedding test.

Usage: python embed_reference.py MODEL_DIR OUT.json
Needs `pip install sentence-transformers`. The output is committed as a test
fixture, so the test suite itself never needs Python or PyTorch.
"""
import json
import sys

from sentence_transformers import SentenceTransformer

LONG = " ".join(
    f"Paragraph {i}: the quarterly report covers revenue, churn, hiring plans and the migration of "
    "the billing system to the new ledger service, with risks noted for each region."
    for i in range(12)
)

SENTENCES = [
    "Where is my order ORD-8821?",
    "It shipped with FedEx and should arrive on Tuesday.",
    "hi",
    "",
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted.",
    "Le café était fermé, alors nous sommes allés au parc. Ça m'a plu !",
    "async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;",
    "The refund policy allows returns within 30 days of delivery for unused items.",
    "🐙 Octopuses have three hearts and blue blood.",
    LONG,
]


def main() -> None:
    model_dir, out = sys.argv[1], sys.argv[2]
    model = SentenceTransformer(model_dir, device="cpu")
    vectors = model.encode(SENTENCES, batch_size=4, convert_to_numpy=True)
    fixture = {
        "generator": "sentence-transformers " + __import__("sentence_transformers").__version__,
        "model": "all-MiniLM-L6-v2",
        "long_text_tokens": len(model.tokenizer(LONG)["input_ids"]),
        "sentences": SENTENCES,
        "vectors": [[round(float(x), 7) for x in v] for v in vectors],
    }
    with open(out, "w") as f:
        json.dump(fixture, f)


if __name__ == "__main__":
    main()
