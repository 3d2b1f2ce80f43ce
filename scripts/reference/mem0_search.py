"""mem0's search over the LoCoMo conversations, measured as the recall bench
measures Octopus, for a comparison on one host in one run.

Usage: python mem0_search.py LOCOMO_DIR MODEL_DIR
Needs `pip install mem0ai sentence-transformers`. Each conversation's turns
are added to mem0 (open-source `Memory`, its default local Qdrant in a
temporary folder) as one user's raw memories (`infer=False`: stored as said,
no model called, as Octopus stores them), each turn as `Speaker: words`, its
image caption appended, with the embedding model of MODEL_DIR, the folder
Octopus runs. Then every question of categories 1-4 is searched, top 20 in
that user's memories, twice: the first time each question is new to mem0,
the second time it is repeated (mem0 keeps no cache, so the two agree).

Prints recall@10 of the evidence turns, as the Rust bench counts it, and the
search latency p50 / p95 of each pass. mem0 runs without spaCy's English
model when it is not installed (it is not on PyPI), which skips its
lemmatised keyword and entity steps: its search is then faster, not slower.
"""
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

os.environ.setdefault("MEM0_TELEMETRY", "False")
# mem0 builds an OpenAI client for its LLM at start; no call is made with
# infer=False.
os.environ.setdefault("OPENAI_API_KEY", "sk-unused")

from mem0 import Memory  # noqa: E402


def conversations(folder):
    for path in sorted(pathlib.Path(folder).glob("*.json")):
        doc = json.loads(path.read_text())
        dialogue = doc.get("conversation", doc)
        turns = []
        number = 1
        while f"session_{number}" in dialogue:
            for turn in dialogue[f"session_{number}"]:
                said = turn["text"]
                if turn.get("blip_caption"):
                    said += f" [shared an image: {turn['blip_caption']}]"
                turns.append((turn["dia_id"], f"{turn['speaker']}: {said}"))
            number += 1
        questions = [q for q in doc["qa"] if q.get("category") in (1, 2, 3, 4)]
        yield path.stem, dialogue["speaker_a"], turns, questions


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * p), len(ordered) - 1)]


def main():
    locomo_dir, model_dir = sys.argv[1], sys.argv[2]
    store = tempfile.mkdtemp(prefix="mem0-bench-")
    memory = Memory.from_config(
        {
            "embedder": {"provider": "huggingface", "config": {"model": model_dir}},
            "vector_store": {
                "provider": "qdrant",
                "config": {"path": store, "collection_name": "locomo", "embedding_model_dims": 384},
            },
            "history_db_path": os.path.join(store, "history.db"),
        }
    )
    loaded = list(conversations(locomo_dir))
    started = time.perf_counter()
    for name, speaker, turns, _ in loaded:
        user = f"{name}-{speaker}"
        for dia_id, text in turns:
            memory.add(
                [{"role": "user", "content": text}],
                user_id=user,
                metadata={"dia_id": dia_id},
                infer=False,
            )
    added = time.perf_counter() - started
    print(f"mem0 {sum(len(t) for _, _, t, _ in loaded)} turns added in {added:.1f} s")

    for label in ("a question not asked before", "the same question again"):
        latencies, recalls = [], []
        for name, speaker, _, questions in loaded:
            user = f"{name}-{speaker}"
            for question in questions:
                asked = time.perf_counter()
                found = memory.search(question["question"], top_k=20, filters={"user_id": user})
                latencies.append((time.perf_counter() - asked) * 1e3)
                evidence = question.get("evidence") or []
                if evidence:
                    top = [(hit.get("metadata") or {}).get("dia_id") for hit in found["results"][:10]]
                    recalls.append(sum(e in top for e in evidence) / len(evidence))
        print(
            f"mem0 search latency ({label}): p50 {percentile(latencies, 0.5):.2f} ms, "
            f"p95 {percentile(latencies, 0.95):.2f} ms; recall@10 {statistics.mean(recalls):.3f} "
            f"over {len(recalls)} questions"
        )


if __name__ == "__main__":
    main()
