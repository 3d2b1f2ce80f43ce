"""sentence-transformers throughput on the texts Octopus's bench embeds.

Usage: python embed_throughput.py MODEL_DIR TEXTS.json THREADS
Prints one JSON object: sentences per second for each set of texts, and
the p50 and p95 of one query embedded alone (the chat messages of at most
32 tokens, the first 500, as Octopus's own rows take them).
"""
import json
import sys
import time

import torch
from sentence_transformers import SentenceTransformer


def main() -> None:
    model_dir, texts_path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.set_num_threads(threads)
    model = SentenceTransformer(model_dir, device="cpu")
    with open(texts_path) as f:
        sets = json.load(f)
    model.encode(sets["short"][:64], batch_size=32)  # warm-up
    rates = {}
    for name, texts in sets.items():
        started = time.perf_counter()
        model.encode(texts, batch_size=32)
        rates[name] = len(texts) / (time.perf_counter() - started)
    queries = [
        t for t in sets["short"] if len(model.tokenizer(t)["input_ids"]) <= 32
    ][:500]
    times = []
    for query in queries:
        started = time.perf_counter()
        model.encode([query], batch_size=1)
        times.append((time.perf_counter() - started) * 1000.0)
    times.sort()
    at = lambda q: times[round((len(times) - 1) * q)]
    rates["query_p50_ms"] = at(0.5)
    rates["query_p95_ms"] = at(0.95)
    print(json.dumps(rates))


if __name__ == "__main__":
    main()
