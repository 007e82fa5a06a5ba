"""The one-line order summaries of docs/semantics.md, as the ops table quotes them.

Each ``## `` section of docs/semantics.md that defines an order opens with a paragraph
``Order in one line: ...``. In a source checkout ``repmode ops`` reads them from that file; an
installed wheel has no docs/, so the build (setup.py's ``build_py``) parses the same file and
writes ``order_summaries.json`` next to this module, as package data.

A leaf: standard library only and no repmode import, because setup.py loads this file by path
(the build runs without torch, and before repmode can be imported).
"""
from __future__ import annotations

import json
from pathlib import Path

SUMMARY_PREFIX = "Order in one line:"
DATA_NAME = "order_summaries.json"
# The package-data file the wheel carries (absent in a source checkout, which reads docs/ itself).
PACKAGED = Path(__file__).resolve().with_name(DATA_NAME)
FORMAT = 1


def parse(text: str) -> dict[str, str]:
    """``{section title: its one-line summary}`` for every ``## `` section of ``text`` whose first
    paragraph starts with ``Order in one line:`` (the paragraph may wrap)."""
    summaries: dict[str, str] = {}
    title, paragraph, done = None, [], True
    for line in text.splitlines() + ["## "]:
        if line.startswith("## "):
            if title is not None and paragraph and paragraph[0].startswith(SUMMARY_PREFIX):
                summaries[title] = " ".join(paragraph)[len(SUMMARY_PREFIX):].strip()
            title, paragraph, done = line[3:].strip(), [], False
        elif not done:
            if line.strip():
                paragraph.append(line.strip())
            elif paragraph:
                done = True
    return summaries


def to_json(summaries: dict[str, str]) -> str:
    """The package-data file: plain JSON (strings only), sorted, so builds are reproducible."""
    return json.dumps({"format": FORMAT, "source": "docs/semantics.md", "summaries": summaries},
                      indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def from_json(text: str) -> dict[str, str]:
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("summaries"), dict):
        raise ValueError(f"not a repmode {DATA_NAME} of format {FORMAT}")
    summaries = data["summaries"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in summaries.items()):
        raise ValueError(f"{DATA_NAME}: summaries must map strings to strings")
    return summaries


def write_package_data(semantics: Path, package_dir: Path) -> Path:
    """Parse ``semantics`` (docs/semantics.md) and write ``package_dir / DATA_NAME``; the build
    fails when the file is missing or holds no summary (an sdist without docs/semantics.md)."""
    if not semantics.is_file():
        raise FileNotFoundError(f"{semantics} not found: repmode's build generates the ops table's order "
                                f"summaries ({DATA_NAME}) from it; the sdist must include it (MANIFEST.in)")
    summaries = parse(semantics.read_text(encoding="utf-8"))
    if not summaries:
        raise ValueError(f"{semantics} has no '## ' section opening with '{SUMMARY_PREFIX}'")
    out = package_dir / DATA_NAME
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(to_json(summaries), encoding="utf-8")
    return out
