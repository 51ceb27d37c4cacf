"""Issue 44's per-family counts on the chat coverage conversations
(tests/python/chat_coverage_cases.py): conversations rendered by transformers, packed by stoker,
ids equal to apply_chat_template's, masks equal to the reference (return_assistant_tokens_mask on
the template with {% generation %} markers, or docs/chat.md's rule on tokenizers' offsets for the
Gemma layout).

    .venv/bin/python bench/chat_coverage.py            # the stoker this Python imports
    /other/.venv/bin/python bench/chat_coverage.py     # another build, for before/after

Prints a Markdown table, and with -v each conversation stoker did not pack or match."""

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import stoker  # noqa: E402
import transformers  # noqa: E402
from chat_coverage_cases import check_family, families  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    print(f"stoker: {Path(stoker.__file__).parent}")
    print("| family | rendered | packed | ids equal | masks equal |")
    print("|---|---|---|---|---|")
    misses = []
    with tempfile.TemporaryDirectory() as root:
        for family, model_dir, template, masks, variables in families(root):
            rows = check_family(model_dir, template, masks, variables, stoker, transformers)
            rendered = sum(r[1] for r in rows)
            packed = sum(r[2] for r in rows)
            ids = sum(r[3] for r in rows)
            masked = sum(bool(r[4]) for r in rows)
            mask_col = str(masked) if masks is not None else "–"
            print(f"| {family} | {rendered} | {packed} | {ids} | {mask_col} |")
            misses += [(family, r) for r in rows if r[1] and not (r[2] and r[3] and r[4])]
    if args.verbose:
        for family, (name, _, packed, ids, masks, detail) in misses:
            print(f"{family}: {name}: packed={packed} ids={ids} masks={masks} {detail[:160]}")


if __name__ == "__main__":
    main()
