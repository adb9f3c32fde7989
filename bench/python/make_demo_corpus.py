#!/usr/bin/env python3
"""Builds examples/demo-corpus.jsonl and examples/demo-pairs.tsv from two public-domain English Bible
translations, the World English Bible (2020, modern English) and the King James Version (1769): the
same verse in both is a natural paraphrase pair, which makes a small, licence-free demo corpus.

Needs Debian's `diatheke sword-text-web sword-text-kjv` (apt-get install); run once, output committed:
    python3 bench/python/make_demo_corpus.py
"""

import json
import re
import subprocess
from pathlib import Path

BOOKS = {  # book: number of chapters
    "Proverbs": 31,
    "Ecclesiastes": 12,
    "James": 5,
    "Matthew": 7,  # chapters 1-7: the Sermon on the Mount and its lead-in
}
MODULES = {"WEB": "engWEB2015eb", "KJV": "engKJV2006eb"}
OUT = Path(__file__).resolve().parents[2] / "examples"

VERSE = re.compile(r"^(?P<ref>[1-3]?\s?[A-Za-z ]+ \d+:\d+): (?P<text>.*)$")
TAG = re.compile(r"<[^>]+>")


def verses(module: str, book: str, chapters: int) -> dict[str, str]:
    raw = subprocess.run(
        ["diatheke", "-b", module, "-f", "plaintext", "-k", f"{book} 1-{chapters}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    out = {}
    for line in raw.splitlines():
        m = VERSE.match(line)
        if not m:
            continue
        text = re.sub(r"\s+", " ", TAG.sub("", m["text"])).strip()
        text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
        if text:
            out[m["ref"]] = text
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    rows, pairs = [], []
    for book, chapters in BOOKS.items():
        web = verses(MODULES["WEB"], book, chapters)
        kjv = verses(MODULES["KJV"], book, chapters)
        for ref, text in web.items():
            if ref not in kjv:
                continue
            rows.append({"text": text, "ref": ref, "version": "WEB"})
            rows.append({"text": kjv[ref], "ref": ref, "version": "KJV"})
            pairs.append((text, kjv[ref], ref))
    with open(OUT / "demo-corpus.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with open(OUT / "demo-pairs.tsv", "w", encoding="utf-8") as f:
        f.write("s1\ts2\tlabel\tref\n")
        for a, b, ref in pairs:
            f.write(f"{a}\t{b}\t1\t{ref}\n")
    print(f"{len(rows)} sentences, {len(pairs)} pairs")


if __name__ == "__main__":
    main()
