"""Scores the citation check (``tools.citation_checks``) on labelled claims, and times it.

Run from the project root: ``.venv/bin/python -m bench.citation_checks [--split dev|held-out]
[--show KIND] [--reps 200]``.

Each claim (``bench/claim_cases.py``) is cited as ``[1]`` against its article as source 1. A
citation is flagged when its status is not "supported". Reported: the statuses per kind of
claim, the precision of the flags (flagged claims that are really unsupported), the recall on
altered facts (altered-fact claims flagged), supported copies flagged, and the CPU time of one
answer of 10 cited sentences over 10 pages of 20,000 characters.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable

from bench.claim_cases import ALTERED_FACT_KINDS, KINDS, Case, article_text, load_cases, sentences
from tools.citation_checks import SourceText, check_answer
from tools.claims import words

STATUSES = ("supported", "partly", "not_found")
PAGE_CHARS = 20_000
PAGES = 10


def verdicts(cases: list[Case]) -> list[str]:
    """Return the status of each case's citation."""
    texts: dict[str, SourceText] = {}
    found = []
    for case in cases:
        source = texts.get(case.article)
        if source is None:
            source = texts[case.article] = SourceText(1, article_text(case.article), False)
        (check,) = check_answer(f"{case.text} [1]", {1: source})
        found.append(check.status)
    return found


def report(title: str, cases: list[Case], statuses: list[str]) -> None:
    """Print the statuses per kind and the figures the targets name."""
    counts: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
    for case, status in zip(cases, statuses, strict=True):
        counts[case.kind][status] += 1
    print(f"\n#### {title}: {len(cases)} claims\n")
    print("| Kind | Claims | supported | partly | not found | Flagged |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for kind, row in counts.items():
        total = sum(row.values())
        if total:
            flagged = total - row["supported"]
            cells = " | ".join(str(row[s]) for s in STATUSES)
            print(f"| {kind} | {total} | {cells} | {flagged / total:.0%} |")
    flagged = [c for c, s in zip(cases, statuses, strict=True) if s != "supported"]
    right = sum(not c.supported for c in flagged)
    altered = [s for c, s in zip(cases, statuses, strict=True) if c.kind in ALTERED_FACT_KINDS]
    copies = [s for c, s in zip(cases, statuses, strict=True) if c.kind == "copied"]
    print(
        f"\nPrecision of flags: {right}/{len(flagged)} = {right / max(1, len(flagged)):.1%}; "
        f"recall on altered facts: {sum(s != 'supported' for s in altered)}/{len(altered)} = "
        f"{sum(s != 'supported' for s in altered) / max(1, len(altered)):.1%}; "
        f"copies flagged: {sum(s != 'supported' for s in copies)} of {len(copies)}."
    )


def show(cases: list[Case], statuses: list[str], kind: str) -> None:
    """Print each claim of ``kind`` with its status, to see what a rule gets wrong."""
    for case, status in zip(cases, statuses, strict=True):
        if case.kind == kind:
            print(f"{status:10} {case.article}: {case.text}")


def timing(reps: int) -> None:
    """Time one answer of 10 cited sentences over 10 pages of 20,000 characters."""
    articles = sorted({c.article for c in load_cases()})
    texts = [article_text(name) for name in articles]
    pages = {}
    for number in range(1, PAGES + 1):
        page = ""
        index = number
        while len(page) < PAGE_CHARS:
            page += texts[index % len(texts)] + "\n\n"
            index += 1
        pages[number] = SourceText(number, page[:PAGE_CHARS], False)
    claims = [sentences(texts[n % len(texts)])[n] for n in range(1, PAGES + 1)]
    answer = " ".join(f"{claim[:-1]} [{n}]." for n, claim in enumerate(claims, start=1))
    words._STEMS.clear()
    started = time.process_time()
    check_answer(answer, pages)
    cold = time.process_time() - started
    checks = check_answer(answer, pages)
    assert len(checks) == PAGES and all(c.status == "supported" for c in checks), checks
    texts_only = [page.text for page in pages.values()]
    # The floor for any check that reads words: each page lower-cased and cut into words once.
    floor = _fastest(reps, lambda: [words.WORD.findall(text.lower()) for text in texts_only])
    warm = _fastest(reps, lambda: check_answer(answer, pages))
    print(
        f"\nCPU per answer (10 cited sentences, 10 pages of {PAGE_CHARS:,} characters), fastest "
        f"of 3 rounds of {reps}: {warm * 1000:.1f} ms; first call, stem cache empty: "
        f"{cold * 1000:.1f} ms; cutting the 10 pages into words once (one regex, side by side): "
        f"{floor * 1000:.1f} ms, so the check costs {warm / floor:.1f} times that."
    )


def _fastest(reps: int, work: Callable[[], object]) -> float:
    """Return the mean CPU time of ``work`` over ``reps`` calls, fastest of 3 rounds."""
    rounds = []
    for _ in range(3):
        started = time.process_time()
        for _ in range(reps):
            work()
        rounds.append((time.process_time() - started) / reps)
    return min(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "held-out"))
    parser.add_argument("--show", choices=KINDS, help="print each claim of this kind")
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    splits = [args.split] if args.split else ["dev", "held-out", None]
    for split in splits:
        cases = load_cases(split)
        if not cases:
            continue
        statuses = verdicts(cases)
        report(split or "all", cases, statuses)
        if args.show:
            show(cases, statuses, args.show)
    timing(args.reps)


if __name__ == "__main__":
    main()
