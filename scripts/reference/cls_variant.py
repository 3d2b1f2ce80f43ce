"""Reference vectors for a CLS-pooled, 512-token model folder (bge-style).

Usage: python cls_variant.py MODEL_DIR OUT.json
Builds the variant the way the Rust test does: the MiniLM folder with
1_Pooling/config.json switched to CLS pooling and sentence_bert_config.json to
max_seq_length 512, then embeds embed_reference.SENTENCES with
sentence-transformers. Shows that pooling and truncation come from the folder.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from embed_reference import SENTENCES  # noqa: E402

from sentence_transformers import SentenceTransformer  # noqa: E402

POOLING = {
    "word_embedding_dimension": 384,
    "pooling_mode_cls_token": True,
    "pooling_mode_mean_tokens": False,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}
SENTENCE_BERT = {"max_seq_length": 512, "do_lower_case": False}


def main() -> None:
    source, out = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "variant")
        shutil.copytree(source, folder)
        with open(os.path.join(folder, "1_Pooling", "config.json"), "w") as f:
            json.dump(POOLING, f)
        with open(os.path.join(folder, "sentence_bert_config.json"), "w") as f:
            json.dump(SENTENCE_BERT, f)
        model = SentenceTransformer(folder, device="cpu")
        vectors = model.encode(SENTENCES, batch_size=4, convert_to_numpy=True)
    fixture = {
        "generator": "sentence-transformers " + __import__("sentence_transformers").__version__,
        "model": "all-MiniLM-L6-v2, CLS pooling, max_seq_length 512",
        "pooling": POOLING,
        "sentence_bert": SENTENCE_BERT,
        "sentences": SENTENCES,
        "vectors": [[round(float(x), 7) for x in v] for v in vectors],
    }
    with open(out, "w") as f:
        json.dump(fixture, f)


if __name__ == "__main__":
    main()
