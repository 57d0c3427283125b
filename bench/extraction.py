"""Main-text extraction against the article extraction benchmark: `python -m bench.extraction`.

Prints shingle precision, recall and F1 over the 121 pages of ../shared/data/extraction-benchmark
(see its README) and the time `extract` takes per page. The metric is scrapinghub's evaluate.py,
re-implemented here so our figures compare with the published ones (trafilatura 0.958 on 181 pages):

- tokens are `\\w+` runs; shingles are 4-token runs (a text of 1-3 tokens is one shorter shingle);
- tp/fp/fn come from the two shingle multisets and are divided by tp+fp+fn, so a long page weighs
  as much as a short one;
- a page whose extraction is empty has no precision (it is left out of the precision mean, as
  evaluate.py does) and recall 0; a page with no true text has no recall;
- precision and recall are the means over pages, F1 their harmonic mean.

Because an empty extraction costs recall only, `strict` also reports precision counting it as 0.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.shared import EXTRACTION_BENCHMARK as BENCHMARK
from tests.support.shared import skip_bench

_TOKEN = re.compile(r"\w+")


def _shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def shingle_scores(truth: str, extracted: str) -> tuple[float | None, float | None]:
    """(precision, recall) of one page; None where evaluate.py leaves the page out of that mean.

    Precision is None when nothing was extracted, recall None when the truth is empty (where
    evaluate.py returns 1.0 for identical texts, tp/(tp+fp) says the same).
    """
    true, pred = _shingles(truth), _shingles(extracted)
    tp = sum((true & pred).values())
    fp = sum((pred - true).values())
    fn = sum((true - pred).values())
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float
    strict_precision: float  #: an empty extraction counted as precision 0 instead of left out
    empty: int  #: pages where nothing was extracted

    def __str__(self) -> str:
        return (
            f"F1 {self.f1:.4f}  precision {self.precision:.4f}  recall {self.recall:.4f}  "
            f"(strict precision {self.strict_precision:.4f}, {self.empty} empty)"
        )


def aggregate(pages: Iterable[tuple[float | None, float | None]]) -> Scores:
    """Means over pages of per-page precision and recall, and F1 from those means."""
    pages = list(pages)
    precisions = [p for p, _ in pages if p is not None]
    recalls = [r for _, r in pages if r is not None]
    precision = statistics.mean(precisions) if precisions else 0.0
    recall = statistics.mean(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    strict = statistics.mean([p or 0.0 for p, _ in pages]) if pages else 0.0
    return Scores(precision, recall, f1, strict, len(pages) - len(precisions))


def benchmark_pages(folder: Path = BENCHMARK) -> Iterator[tuple[str, bytes, str, str]]:
    """(page id, raw HTML bytes, url, true article text) of every page, in a stable order."""
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    for page_id in sorted(truth):
        body = gzip.decompress((folder / "html" / f"{page_id}.html.gz").read_bytes())
        yield page_id, body, truth[page_id]["url"], truth[page_id]["articleBody"]


@dataclass(frozen=True)
class Run:
    scores: Scores
    seconds: list[float]  #: extraction time of each page
    per_page: dict[str, tuple[float | None, float | None]]


def run(folder: Path = BENCHMARK, extractor: Callable[[bytes, str], str] | None = None) -> Run:
    """Scores and timings of `extractor(html bytes, url) -> text`, by default our `extract`."""
    if extractor is None:
        from activities.web.extraction import extract

        def extractor(body: bytes, url: str) -> str:
            return extract(body, "text/html", url=url).text

    per_page, seconds = {}, []
    for page_id, body, url, truth in benchmark_pages(folder):
        started = time.perf_counter()
        extracted = extractor(body, url)
        seconds.append(time.perf_counter() - started)
        per_page[page_id] = shingle_scores(truth, extracted)
    return Run(aggregate(per_page.values()), seconds, per_page)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _bounded_cost() -> None:
    """The same pages through the bounded extraction children (what a research does): the cost of
    the process boundary per normal page."""
    import asyncio

    from activities.web.bounded import ExtractionPool, Limits

    async def timed() -> list[float]:
        pool = ExtractionPool(Limits(processes=1))
        try:
            await pool.extract(b"<p>warm up</p>", "text/html", None, None)
            seconds = []
            for _, body, url, _ in benchmark_pages():
                started = time.perf_counter()
                await pool.extract(body, "text/html", url, None)
                seconds.append(time.perf_counter() - started)
            return seconds
        finally:
            pool.close()

    ms = [s * 1000 for s in asyncio.run(timed())]
    print(
        f"bounded (child process, {len(ms)} pages): p50 {statistics.median(ms):.1f} ms, "
        f"p95 {statistics.quantiles(ms, n=20)[18]:.1f} ms, total {sum(ms) / 1000:.1f} s"
    )


def main() -> None:
    skip_bench(BENCHMARK)
    import trafilatura

    result = run()
    ms = [s * 1000 for s in result.seconds]
    print(f"activities.web.extraction, {len(ms)} pages: {result.scores}")
    print(
        f"time per page: mean {statistics.mean(ms):.1f} ms, p50 {statistics.median(ms):.1f} ms, "
        f"p95 {statistics.quantiles(ms, n=20)[18]:.1f} ms, max {max(ms):.1f} ms, total {sum(ms) / 1000:.1f} s"
    )
    _bounded_cost()
    weakest = sorted(
        result.per_page.items(), key=lambda item: (item[1][0] or 0.0) + (item[1][1] or 0.0)
    )[:5]
    print(
        "weakest pages (precision/recall):",
        ", ".join(
            f"{page_id[:10]} {_score(precision)}/{_score(recall)}"
            for page_id, (precision, recall) in weakest
        ),
    )
    # For comparison, trafilatura untuned: all defaults, then the benchmark's own run_trafilatura.py.
    for label, comments in (("defaults", True), ("include_comments=False", False)):

        def untuned(body: bytes, url: str, comments: bool = comments) -> str:
            return trafilatura.extract(body, include_comments=comments) or ""

        reference = run(extractor=untuned)
        print(f"trafilatura {label}: {reference.scores}")


if __name__ == "__main__":
    main()
