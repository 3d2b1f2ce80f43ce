#!/usr/bin/env python3
"""Checks the documentation the way a reader meets it.

    docs_check.py links             every relative link and anchor resolves
    docs_check.py words             no text a user reads tells how it was developed,
                                    and every source file says its job
    docs_check.py run WORKDIR       runs each page's runnable blocks in a session of
                                    its own (after the quickstart and the pages it
                                    says it builds on), pages in a shuffled order,
                                    and compares each shown output with what came out

Runnable blocks are fenced blocks whose info string says so:

    ```bash,run                 run in the page's shell session
    ```bash,background,port=N   started in the background; the next block runs
                                once 127.0.0.1:N accepts connections
    ```json,output              what the block before printed (JSON values)
    ```text,output              the same, compared line by line

In an output, `…` stands for any text: a whole string "…" for any value, and
inside a string or a line for any characters. Ports 7700 (Octopus), 7701 (a
second Octopus), 8787 (a webhook endpoint) and 11434 (Ollama's) are read as
free ports of the run's own, so that a server already listening on this
machine does not meet the test: written in the blocks, and
as the default address of `octopus serve` and of the command line
(OCTOPUS_LISTEN, OCTOPUS_URL); the server vouches for the stand-in Ollama's
port as it does for Ollama's own (a configuration file of the run's).
"""

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "docs" / "src"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.M | re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
REPOSITORY_PATH = re.compile(r"(?<![\w/.-])((?:crates|scripts|clients|config|docs)/[\w./*{}<>-]+)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.M)


def pages_in_order():
    """The book's pages as SUMMARY.md lists them."""
    summary = (BOOK / "SUMMARY.md").read_text()
    return [BOOK / target for target in re.findall(r"\]\(([^)]+\.md)\)", summary)]


def slug(heading):
    """The anchor mdBook gives a heading."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", text)
    text = text.strip().lower()
    out = []
    for ch in text:
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def without_code(text):
    return FENCE.sub("", text)


def check_links():
    documents = [ROOT / name for name in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    documents += sorted(BOOK.rglob("*.md"))
    listed = set(pages_in_order())
    problems = []
    for page in sorted(BOOK.rglob("*.md")):
        if page.name != "SUMMARY.md" and page not in listed:
            problems.append(f"{page.relative_to(ROOT)}: not listed in SUMMARY.md")
    for page in listed:
        if not page.exists():
            problems.append(f"docs/src/SUMMARY.md: lists {page.relative_to(ROOT)}, which does not exist")
    for document in documents:
        text = without_code(document.read_text())
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (document.parent / path).resolve() if path else document
            where = f"{document.relative_to(ROOT)}: link {target}"
            if not resolved.exists():
                problems.append(f"{where}: no such file")
                continue
            if anchor and resolved.suffix == ".md":
                anchors = {slug(h) for h in HEADING.findall(without_code(resolved.read_text()))}
                if anchor not in anchors:
                    problems.append(f"{where}: no heading with anchor #{anchor}")
            if document.is_relative_to(BOOK) and not resolved.is_relative_to(BOOK):
                problems.append(f"{where}: leaves the book (link to the repository's file by its URL instead)")
        # A file of the repository named in the text exists.
        for named in REPOSITORY_PATH.findall(document.read_text()):
            named = named.rstrip(".,;:)")
            if not any(c in named for c in "*{<") and not (ROOT / named).exists():
                problems.append(f"{document.relative_to(ROOT)}: names {named}, which does not exist")
    return problems


# What a user reads says what Octopus does, not how it came to be.
DEVELOPMENT_WORDS = [
    (re.compile(r"\b[Ii]ssues? #?\d+"), "an issue number"),
    (re.compile(r"#\d{2,}\b"), "an issue number"),
    (re.compile(r"\bthis session\b", re.I), "a development session"),
    (re.compile(r"\.\./shared\b"), "a path outside the repository"),
    (re.compile(r"\bDESIGN\.md\b|\b[Ss]eeds?[ /]0\d\d\b"), "a document outside the repository"),
    (re.compile(r"(?<![-\w])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![-\w])"), "a commit hash"),
]


def check_words():
    files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    files += sorted(BOOK.rglob("*.md"))
    files += sorted(p for p in (ROOT / "crates").rglob("*") if p.suffix in (".rs", ".toml", ".md"))
    files += sorted((ROOT / "scripts").glob("*"))
    problems = []
    for path in files:
        if not path.is_file() or path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for pattern, what in DEVELOPMENT_WORDS:
                # Hex in code is data (hashes, keys in tests), not history.
                if what == "a commit hash" and path.suffix != ".md":
                    continue
                found = pattern.search(line)
                if found:
                    problems.append(f"{path.relative_to(ROOT)}:{number}: {what}: {found.group(0)!r}")
    return problems


def check_module_docs():
    """Every source file opens with a `//!` line saying its job."""
    problems = []
    for path in sorted((ROOT / "crates").glob("*/src/**/*.rs")):
        first = path.read_text().split("\n", 1)[0]
        if not first.startswith("//!"):
            problems.append(f"{path.relative_to(ROOT)}: opens without a //! line saying its job")
    return problems


def runnable_blocks():
    """(page, line, kind, options, text, language) for every runnable or output block, in book order."""
    blocks = []
    for page in pages_in_order():
        text = page.read_text()
        for match in FENCE.finditer(text):
            info = [part.strip() for part in match.group(1).split(",")]
            kinds = {"run", "background", "output"} & set(info)
            if not kinds:
                continue
            options = dict(part.split("=", 1) for part in info if "=" in part)
            line = text.count("\n", 0, match.start()) + 1
            blocks.append((page.relative_to(ROOT), line, kinds.pop(), options, match.group(2), info[0]))
    return blocks


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def matches(expected, actual):
    if isinstance(expected, str):
        if expected == "…":
            return True
        if not isinstance(actual, str):
            return False
        pattern = ".*".join(re.escape(part) for part in expected.split("…"))
        return re.fullmatch(pattern, actual, re.S) is not None
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            matches(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and expected.keys() == actual.keys() and all(
            matches(expected[k], actual[k]) for k in expected)
    return type(expected) is type(actual) and expected == actual


def json_values(text):
    decoder, values, at = json.JSONDecoder(), [], 0
    text = text.strip()
    while at < len(text):
        value, at = decoder.raw_decode(text, at)
        values.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return values


def output_matches(kind_of_output, expected, actual):
    if kind_of_output == "json":
        try:
            return matches(json_values(expected), json_values(actual))
        except json.JSONDecodeError:
            return False
    want = [line.rstrip() for line in expected.strip("\n").splitlines()]
    got = [line.rstrip() for line in actual.strip("\n").splitlines()]
    return len(want) == len(got) and all(matches(w, g) for w, g in zip(want, got))


QUICKSTART = Path("docs/src/getting-started/quickstart.md")
# A page that builds on others says so, for its readers in words and for this
# check in a comment: <!-- runs after: guide/walkthrough.md guide/recall.md -->
RUNS_AFTER = re.compile(r"<!--\s*runs after:\s*(.*?)\s*-->")


def runs_after(page):
    """The pages `page` (relative to the repository) builds on, as it declares them."""
    found = RUNS_AFTER.search((ROOT / page).read_text())
    return [Path("docs/src") / name for name in found.group(1).split()] if found else []


def chain(page, order):
    """The quickstart, the pages `page` builds on (and those they build on), in
    book order, then the page itself."""
    wanted, pending = set(), [page]
    while pending:
        for before in runs_after(pending.pop()):
            if before not in wanted:
                wanted.add(before)
                pending.append(before)
    before = [p for p in order if p in wanted and p not in (page, QUICKSTART)]
    return [QUICKSTART] + before + ([page] if page != QUICKSTART else [])


def run(workdir):
    """Runs every page with runnable blocks in a session of its own, each with
    a fresh server: the quickstart, the pages it declares it builds on, then
    its own blocks, whose outputs are compared. The pages go in a shuffled
    order (OCTOPUS_DOCS_SEED repeats one), so that none leans on what
    another left behind without saying so."""
    import random
    import shutil
    workdir = Path(workdir)
    blocks = runnable_blocks()
    order = []
    for block in blocks:
        if block[0] not in order:
            order.append(block[0])
    seed = int(os.environ.get("OCTOPUS_DOCS_SEED") or random.randrange(1 << 16))
    pages = [page for page in order if page != QUICKSTART]
    random.Random(seed).shuffle(pages)
    print(f"docs: each page alone after the quickstart, in the order of OCTOPUS_DOCS_SEED={seed}")
    problems, ran, checked = [], 0, 0
    for number, page in enumerate([QUICKSTART] + pages):
        session = workdir / f"session{number}"
        session.mkdir()
        shutil.copytree(workdir / "home", session / "home", symlinks=True)
        pages_run = chain(page, order)
        session_blocks = [b for p in pages_run for b in blocks if b[0] == p]
        found, counts = run_session(session, session_blocks, page)
        problems += [f"(running {page} after {', '.join(map(str, pages_run[:-1])) or 'nothing'})\n{f}"
                     for f in found]
        ran, checked = ran + counts[0], checked + counts[1]
    print(f"docs: {ran} runnable blocks ran, {checked} outputs compared, in {len(order)} sessions")
    return problems


def run_session(workdir, blocks, page):
    """Runs `blocks` in one shell session against a server of its own; compares
    the outputs of `page`'s. Returns the problems, and how many of the page's
    blocks ran and outputs were compared."""
    ports = {port: str(free_port()) for port in ("7700", "7701", "8787", "11434")}

    def local(text):
        for default, port in ports.items():
            text = text.replace(default, port)
        return text

    script = [
        "set -eo pipefail",
        'trap \'echo $? > "$OCTOPUS_DOCS_RUN/exit"\' EXIT',
        'wait_for_port() { for _ in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.2; done; echo "nothing listens on $1" >&2; return 1; }',
    ]
    background = []
    for index, (_, _, kind, options, text, _) in enumerate(blocks):
        if kind == "output":
            continue
        path = workdir / f"block{index}.sh"
        path.write_text(local(text))
        script.append(f'echo {index} > "$OCTOPUS_DOCS_RUN/current"')
        if kind == "background":
            script.append(f'source "{path}" > "$OCTOPUS_DOCS_RUN/out{index}" 2>&1 &')
            script.append(f'echo $! >> "$OCTOPUS_DOCS_RUN/pids"')
            background.append(index)
            if "port" in options:
                script.append(f"wait_for_port {local(options['port'])}")
        else:
            script.append(f'source "{path}" > "$OCTOPUS_DOCS_RUN/out{index}" 2> "$OCTOPUS_DOCS_RUN/err{index}"')
    script.append('echo done > "$OCTOPUS_DOCS_RUN/current"')
    (workdir / "session.sh").write_text("\n".join(script) + "\n")

    environment = dict(os.environ, OCTOPUS_DOCS_RUN=str(workdir))
    for name in ("OCTOPUS_URL", "OCTOPUS_API_KEY", "OCTOPUS_ADMIN_KEY", "OCTOPUS_AGENT", "OCTOPUS_CONFIG",
                 "OCTOPUS_DATA_DIR", "OCTOPUS_DATABASE_URL", "OCTOPUS_QDRANT_URL", "OCTOPUS_LISTEN"):
        environment.pop(name, None)
    # What a reader's machine has by default, on the run's own ports: Ollama's
    # own endpoint is http://localhost:11434, which the server trusts as it
    # trusts any provider's; the stand-in's port is vouched for instead.
    config = workdir / "octopus.toml"
    config.write_text(f'[llm]\nallowed_base_urls = ["http://localhost:{ports["11434"]}"]\n')
    environment["OCTOPUS_CONFIG"] = str(config)
    environment["OCTOPUS_LISTEN"] = f"127.0.0.1:{ports['7700']}"
    environment["OCTOPUS_URL"] = f"http://127.0.0.1:{ports['7700']}"
    session_dir = workdir / "home"
    try:
        subprocess.run(["bash", str(workdir / "session.sh")], cwd=session_dir, env=environment, timeout=1800,
                       stdin=subprocess.DEVNULL)
    finally:
        pids = workdir / "pids"
        if pids.exists():
            for pid in pids.read_text().split():
                subprocess.run(["pkill", "-TERM", "-P", pid], check=False)
                subprocess.run(["kill", "-TERM", pid], check=False, stderr=subprocess.DEVNULL)

    current = (workdir / "current").read_text().strip() if (workdir / "current").exists() else "0"
    problems = []
    if current != "done":
        page, line = blocks[int(current)][:2]
        status = (workdir / "exit").read_text().strip() if (workdir / "exit").exists() else "?"
        err = workdir / f"err{current}"
        out = workdir / f"out{current}"
        problems.append(f"{page}:{line}: the block failed (exit {status})\n"
                        f"--- its output:\n{out.read_text() if out.exists() else ''}"
                        f"--- its errors:\n{err.read_text() if err.exists() else ''}")
        for index in background:
            said = workdir / f"out{index}"
            if said.exists():
                problems.append(f"(the background block at {blocks[index][0]}:{blocks[index][1]} said:)\n"
                                + said.read_text()[-3000:])
        return problems, (0, 0)
    previous = None
    checked = 0
    for index, (at, line, kind, _, text, language) in enumerate(blocks):
        if kind != "output":
            previous = index
            continue
        if at != page:
            continue
        actual = (workdir / f"out{previous}").read_text()
        if not output_matches(language, local(text), actual):
            problems.append(f"{at}:{line}: the block above printed something else.\n"
                            f"--- expected:\n{text}--- printed:\n{actual}")
        checked += 1
    return problems, (sum(1 for b in blocks if b[0] == page and b[2] != "output"), checked)


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "links":
        problems = check_links()
    elif command == "words":
        problems = check_words() + check_module_docs()
    elif command == "run" and len(sys.argv) == 3:
        problems = run(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
