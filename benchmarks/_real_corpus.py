"""A deterministic corpus of real-world shape, for measuring near-duplicate recall by Jaccard band.

Planted corpora (``neardup.planted.generator``) edit one kind of text at chosen rates; real
collections are lumpier: long and tiny documents side by side, boilerplate shared by unrelated
pages, many versions of one file, translations, exact copies by the hundred. This module builds
such a collection from text already on the machine, plus generated pages, so that every Jaccard
band from 0.5 to 1.0 has pairs of several kinds:

- ``code``: one standard-library module (``json/decoder.py``) from every Python under
  ``~/.pyenv/versions`` that has it (2.7 ... 3.13 here): several versions of one long document.
- ``manpage``: troff sources from ``/usr/share/man`` (gzip), a page in every language it has.
- ``licence``: ``/usr/share/doc/*/copyright`` (Debian's machine-readable copyright files, one
  template filled in per package) and ``/usr/share/common-licenses/*``.
- ``changelog``: ``/usr/share/doc/*/changelog*``, capped.
- ``doc``: READMEs, NEWS, AUTHORS ... from ``/usr/share/doc`` and the text files of each stdlib.
- ``template``: generated web pages (news, products, listings, error pages) whose navigation,
  sidebar and footer are shared across a site, with bodies drawn from a vocabulary of the real
  texts; syndicated articles on a second site; error pages repeated many times.
- ``table``: generated CSV/TSV/Markdown tables and lists, each with revisions (rows added,
  removed, changed) of the one before.

On top of those, a tenth of the corpus are edited copies of other documents (their kind kept):
word-level substitutions, insertions and deletions at a rate drawn log-uniformly from 1% to 30%,
which at word 3-shingles spans Jaccard ~0.94 down to ~0.2.

A source that is missing is skipped; the generated kinds fill what the real ones do not, so the
corpus builds anywhere. The same machine, ``max_docs`` and ``seed`` give the same list: paths are
walked in sorted order and every choice comes from a generator seeded by ``seed`` and its part.

    from _real_corpus import build_corpus, cached_corpus
    docs = cached_corpus("benchmarks/results/real20k.jsonl", max_docs=20000)  # [{"id", "text", "kind"}]
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import random
import re
import sys
import sysconfig
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

CORPUS_VERSION = 1
"""Bump when a change to this module changes the documents it builds (invalidates caches)."""

KINDS = ("code", "manpage", "licence", "changelog", "template", "table", "doc")

MAX_CHARS = 100_000
CHANGELOG_CHARS = 60_000

# Share of max_docs per kind; the real sources take what they have up to their share, and the
# generated kinds (template 60%, table 40%) fill the rest after the edited copies' tenth.
SHARES = {"code": 0.20, "manpage": 0.22, "licence": 0.05, "changelog": 0.05, "doc": 0.04}
EDITED_SHARE = 0.10
EDIT_RATES = (0.01, 0.30)

PYENV_VERSIONS = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
MAN_ROOT = Path("/usr/share/man")
DOC_ROOT = Path("/usr/share/doc")
COMMON_LICENSES = Path("/usr/share/common-licenses")

_SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__", "idle_test", "tests", "test"}
_DOC_NAMES = re.compile(r"^(README|NEWS|AUTHORS|TODO|THANKS|FAQ|BUGS|HISTORY|CREDITS)|\.(txt|md|rst)(\.gz)?$")
_WORD = re.compile(r"[A-Za-z][a-z]{2,13}")


def build_corpus(max_docs: int = 20000, seed: int = 0) -> list[dict[str, str]]:
    """Up to ``max_docs`` documents ``{"id": str, "text": str, "kind": str}`` (kind one of
    :data:`KINDS`) in a seeded order; ids are unique and say where the text came from."""
    if max_docs < 1:
        raise ValueError(f"max_docs={max_docs} must be >= 1")
    n_edited = round(EDITED_SHARE * max_docs)
    quota = {kind: int(share * max_docs) for kind, share in SHARES.items()}

    docs: list[dict[str, str]] = []
    docs += _stdlib_code(quota["code"], _rng(seed, "code"))
    docs += _manpages(quota["manpage"], _rng(seed, "manpage"))
    docs += _licences(quota["licence"], _rng(seed, "licence"))
    docs += _changelogs(quota["changelog"], _rng(seed, "changelog"))
    docs += _docs(quota["doc"], _rng(seed, "doc"))

    vocab, weights = _vocabulary(docs)
    rest = max(0, max_docs - n_edited - len(docs))
    n_template = round(0.6 * rest)
    docs += _templates(n_template, vocab, weights, _np_rng(seed, "template"))
    docs += _tables(rest - n_template, vocab, weights, _np_rng(seed, "table"))
    docs += _edited_copies(docs, min(n_edited, max_docs - len(docs)), vocab, weights, _np_rng(seed, "edit"))

    random.Random(f"{seed}:order").shuffle(docs)
    docs = docs[:max_docs]
    assert len({d["id"] for d in docs}) == len(docs), "document ids must be unique"
    return docs


def cached_corpus(path: str | os.PathLike[str], **kw: Any) -> list[dict[str, str]]:
    """:func:`build_corpus` (``kw`` passed on), cached as JSONL at ``path``: one document a
    line. A ``path + ".meta.json"`` beside it records the arguments and :data:`CORPUS_VERSION`;
    a cache without it, or made with others, is rebuilt. Both files are written to a temporary
    name, fsynced and renamed, the stale record removed first and the new one written last, so a
    crash never leaves a half or mismatched cache that is used. The machine's files are not part
    of the key: delete the cache after installing packages or Pythons."""
    path = Path(path)
    meta_path = path.with_name(path.name + ".meta.json")
    meta = {"corpus_version": CORPUS_VERSION, "max_docs": 20000, "seed": 0, **kw}
    try:
        if json.loads(meta_path.read_text()) == meta:
            with open(path, encoding="utf-8") as f:
                return [json.loads(line) for line in f]
    except (OSError, ValueError):
        pass
    docs = build_corpus(**kw)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta_path.unlink(missing_ok=True)
    _write_atomic(path, "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    _write_atomic(meta_path, json.dumps(meta) + "\n")
    return docs


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _rng(seed: int, part: str) -> random.Random:
    return random.Random(f"{seed}:{part}")  # str seeds are hashed with SHA-512: stable across runs


def _np_rng(seed: int, part: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}:{part}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _cap(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, at a line end where there is one."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut + 1 if cut > limit // 2 else limit]


def _read(path: Path, limit: int = MAX_CHARS) -> str | None:
    """The text of ``path`` (gunzipped if it ends in .gz), capped; None if unreadable or blank."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path) as f:
                raw = f.read(4 * limit)
        else:
            with open(path, "rb") as f:
                raw = f.read(4 * limit)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    text = _cap(raw.decode("utf-8", errors="replace"), limit)
    return text if text.strip() else None


def _doc(kind: str, id_: str, text: str) -> dict[str, str]:
    return {"id": f"{kind}:{id_}", "text": text, "kind": kind}


def _take_families(
    families: list[list[tuple[str, Path]]], quota: int, kind: str, limit: int = MAX_CHARS
) -> list[dict[str, str]]:
    """Whole families (already in a seeded order) read until ``quota`` documents."""
    docs: list[dict[str, str]] = []
    for family in families:
        if len(docs) >= quota:
            break
        for id_, path in family[: quota - len(docs)]:
            text = _read(path, limit)
            if text is not None:
                docs.append(_doc(kind, id_, text))
    return docs


def _is_link(path: Path) -> bool:
    # A linked package folder or file repeats another's text under a second name: not a document.
    return path.is_symlink() or path.parent.is_symlink()


# ---------------------------------------------------------------------------------------------
# Real sources
# ---------------------------------------------------------------------------------------------


def _stdlib_roots() -> list[tuple[str, Path]]:
    """(version, lib/pythonX.Y folder) of every pyenv Python, and this interpreter's stdlib if it
    is none of them; sorted by version."""
    roots: dict[Path, str] = {}
    if PYENV_VERSIONS.is_dir():
        for version in sorted(os.listdir(PYENV_VERSIONS)):
            for lib in sorted((PYENV_VERSIONS / version / "lib").glob("python*")):
                if lib.is_dir():
                    roots.setdefault(lib.resolve(), version)
    own = Path(sysconfig.get_paths()["stdlib"]).resolve()
    if own.is_dir() and own not in roots:
        roots[own] = ".".join(str(v) for v in sys.version_info[:3])

    def key(item: tuple[Path, str]) -> tuple[int, ...]:
        return tuple(int(p) if p.isdigit() else 0 for p in item[1].split("."))

    return [(version, root) for root, version in sorted(roots.items(), key=key)]


def _stdlib_files(suffixes: tuple[str, ...], names: re.Pattern[str] | None = None) -> dict[str, list]:
    """relative path -> [(version, path)] of the stdlib files ending in ``suffixes`` (or whose
    name matches ``names``), tests and site-packages left out."""
    files: dict[str, list[tuple[str, Path]]] = {}
    for version, root in _stdlib_roots():
        for folder, dirs, names_here in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("test"))
            for name in sorted(names_here):
                if name.startswith("test"):
                    continue
                if name.endswith(suffixes) or (names is not None and names.search(name)):
                    path = Path(folder, name)
                    files.setdefault(path.relative_to(root).as_posix(), []).append((version, path))
    return files


def _stdlib_code(quota: int, rng: random.Random) -> list[dict[str, str]]:
    """Modules in a seeded order, each in every version that has it, until ``quota``."""
    files = _stdlib_files((".py",))
    families = [[(f"{v}/{rel}", p) for v, p in files[rel]] for rel in sorted(files)]
    rng.shuffle(families)
    return _take_families(families, quota, "code")


def _manpages(quota: int, rng: random.Random) -> list[dict[str, str]]:
    """Pages in every language (and section) they have: first translated pages, to 40% of
    ``quota``, then the others, in seeded orders; at most ``quota // 20`` pages per tool."""
    if not MAN_ROOT.is_dir():
        return []
    pages: dict[str, list[tuple[str, Path]]] = {}
    for folder, dirs, names in os.walk(MAN_ROOT):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder, name)
            if name.endswith(".gz") and not path.is_symlink():
                rel = path.relative_to(MAN_ROOT).as_posix()
                pages.setdefault(name[:-3], []).append(("en/" + rel if rel.startswith("man") else rel, path))
    # One tool's pages can be most of a folder (gcloud_* here: 10,000 of man1's 18,000, all one
    # template); a cap per leading word keeps any one from being most of the corpus.
    cap = max(10, quota // 20)
    per_tool: Counter[str] = Counter()
    names = sorted(pages)
    translated = [n for n in names if len({rel.split("/")[0] for rel, _ in pages[n]}) > 1]
    rest = [n for n in names if len({rel.split("/")[0] for rel, _ in pages[n]}) == 1]
    rng.shuffle(translated)
    rng.shuffle(rest)
    docs: list[dict[str, str]] = []
    for names, share in ((translated, 0.4), (rest, 1.0)):
        for name in names:
            if len(docs) >= int(share * quota):
                break
            tool = re.split(r"[^a-z0-9]", name.lower(), maxsplit=1)[0]
            if per_tool[tool] < cap:
                family = _take_families(
                    [pages[name]], min(quota - len(docs), cap - per_tool[tool]), "manpage"
                )
                per_tool[tool] += len(family)
                docs += family
    return docs


def _package_files(pattern: str) -> list[Path]:
    if not DOC_ROOT.is_dir():
        return []
    return [p for p in sorted(DOC_ROOT.glob(pattern)) if p.is_file() and not _is_link(p)]


def _sample(items: list, quota: int, rng: random.Random) -> list:
    """``quota`` of ``items`` chosen by ``rng``, in their order."""
    if len(items) <= quota:
        return items
    return [items[i] for i in sorted(rng.sample(range(len(items)), quota))]


def _licences(quota: int, rng: random.Random) -> list[dict[str, str]]:
    paths = [(p.relative_to(DOC_ROOT).as_posix(), p) for p in _package_files("*/copyright")]
    if COMMON_LICENSES.is_dir():
        paths += [
            (f"common-licenses/{p.name}", p)
            for p in sorted(COMMON_LICENSES.iterdir())
            if p.is_file() and not p.is_symlink()
        ]
    return _take_families([[item] for item in _sample(paths, quota, rng)], quota, "licence")


def _changelogs(quota: int, rng: random.Random) -> list[dict[str, str]]:
    paths = [(p.relative_to(DOC_ROOT).as_posix(), p) for p in _package_files("*/changelog*")]
    return _take_families(
        [[item] for item in _sample(paths, quota, rng)], quota, "changelog", CHANGELOG_CHARS
    )


def _docs(quota: int, rng: random.Random) -> list[dict[str, str]]:
    """Package READMEs and NEWS (half the quota, as far as they go), then the stdlib's text
    files, each in every version that has it."""
    paths = [
        (p.relative_to(DOC_ROOT).as_posix(), p)
        for p in _package_files("*/*")
        if _DOC_NAMES.search(p.name) and not p.name.startswith("changelog")
    ]
    docs = _take_families([[item] for item in _sample(paths, quota // 2, rng)], quota // 2, "doc")
    files = _stdlib_files((".txt", ".rst", ".html"), re.compile(r"^README"))
    families = [[(f"python/{v}/{rel}", p) for v, p in files[rel]] for rel in sorted(files)]
    rng.shuffle(families)
    docs += _take_families(families, quota - len(docs), "doc")
    if len(docs) < quota:  # fewer stdlib texts than half the quota: more package files
        used = {d["id"] for d in docs}
        more = [item for item in paths if f"doc:{item[0]}" not in used]
        docs += _take_families([[item] for item in more], quota - len(docs), "doc")
    return docs


# ---------------------------------------------------------------------------------------------
# Generated kinds
# ---------------------------------------------------------------------------------------------


def _vocabulary(docs: list[dict[str, str]], size: int = 20000) -> tuple[list[str], np.ndarray]:
    """The ``size`` most frequent words (3-14 letters, lowercased) of the prose documents, with
    sampling weights count ** 0.75 (word2vec's smoothing: Zipf-like, less peaked). Made-up
    syllable words when the machine has too little text."""
    counts: Counter[str] = Counter()
    for d in docs:
        if d["kind"] in ("manpage", "licence", "changelog", "doc"):
            counts.update(w.lower() for w in _WORD.findall(d["text"]))
    by_count = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:size]
    ranked = [(w, float(c)) for w, c in by_count]
    if len(ranked) < 500:
        syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
        rng = random.Random("vocabulary")
        words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(size)})
        ranked = [(w, 1.0 / (i + 1)) for i, w in enumerate(rng.sample(words, len(words)))]
    weights = np.array([c for _, c in ranked], dtype=np.float64) ** 0.75
    return [w for w, _ in ranked], weights / weights.sum()


class _Words:
    """Seeded word sampler over the vocabulary."""

    def __init__(self, vocab: list[str], weights: np.ndarray, rng: np.random.Generator) -> None:
        self.vocab = np.array(vocab, dtype=object)
        self.cum = np.cumsum(weights)
        self.cum[-1] = 1.0
        self.rng = rng

    def words(self, n: int) -> list[str]:
        return self.vocab[np.searchsorted(self.cum, self.rng.random(n), side="right")].tolist()

    def title(self, n: int) -> str:
        return " ".join(w.capitalize() for w in self.words(n))

    def prose(self, n_words: int) -> str:
        """Paragraphs of sentences of 6-24 words."""
        words = self.words(n_words)
        paragraphs, sentences, i = [], [], 0
        while i < len(words):
            k = int(self.rng.integers(6, 25))
            sentence = words[i : i + k]
            sentences.append(" ".join([sentence[0].capitalize(), *sentence[1:]]) + ".")
            i += k
            if len(sentences) >= self.rng.integers(3, 8) or i >= len(words):
                paragraphs.append("<p>" + " ".join(sentences) + "</p>")
                sentences = []
        return "\n".join(paragraphs)


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _site(i: int, w: _Words) -> dict[str, Any]:
    """A site's shared parts: header with navigation, sidebar, footer, its products' attributes."""
    rng = w.rng
    name = w.title(2)
    domain = name.lower().replace(" ", "-") + rng.choice([".com", ".org", ".net", ".co.uk"])
    nav = w.words(int(rng.integers(6, 15)))
    header = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<link rel="stylesheet" href="https://{domain}/static/site.css">\n</head>\n<body>\n'
        f'<header class="site-header"><a class="logo" href="https://{domain}/">{name}</a>\n<nav><ul>\n'
        + "".join(f'<li><a href="/{n}/">{n.capitalize()}</a></li>\n' for n in nav)
        + "</ul></nav>\n"
        + '<form action="/search"><input name="q" placeholder="Search"></form>\n</header>\n'
    )
    sidebar = (
        '<aside class="sidebar"><h3>Popular</h3><ul>\n'
        + "".join(f'<li><a href="/p/{k}">{w.title(int(rng.integers(3, 8)))}</a></li>\n' for k in range(8))
        + "</ul></aside>\n"
    )
    footer = (
        '<footer class="site-footer">\n'
        + w.prose(int(rng.integers(20, 100)))
        + f"\n<p>&copy; {int(rng.integers(1998, 2025))} {name}. All rights reserved.</p>\n"
        + "<ul>"
        + "".join(f'<li><a href="/{n}">{n.capitalize()}</a></li>' for n in w.words(int(rng.integers(4, 9))))
        + "</ul>\n</footer>\n</body>\n</html>\n"
    )
    if rng.random() < 0.5:
        footer = '<div class="cookies">' + w.prose(int(rng.integers(40, 90))) + "</div>\n" + footer
    attributes = [w.title(1) for _ in range(int(rng.integers(6, 13)))]
    return {
        "id": i,
        "name": name,
        "domain": domain,
        "header": header,
        "sidebar": sidebar,
        "footer": footer,
        "attributes": attributes,
        "products": [],
    }


def _templates(count: int, vocab: list[str], weights: np.ndarray, rng: np.random.Generator) -> list[dict]:
    """``count`` generated pages: news articles (40%), syndicated copies on another site (8%),
    product pages (30%), listing snapshots (12%) and error/login pages (10%, identical within a
    site, Zipf-distributed so one page repeats many times)."""
    if count <= 0:
        return []
    w = _Words(vocab, weights, rng)
    sites = [_site(i, w) for i in range(min(40, 2 + count // 100))]
    authors = [w.title(2) for _ in range(40)]
    kinds = rng.choice(
        ["news", "syndicated", "product", "listing", "stub"], size=count, p=[0.40, 0.08, 0.30, 0.12, 0.10]
    )
    stubs = [
        [
            f"<main><h1>{title}</h1>\n" + w.prose(int(rng.integers(8, 40))) + "</main>\n"
            for title in ("Page not found", "Please sign in", "Access denied", "Down for maintenance")
        ]
        for _ in sites
    ]
    stub_p = 1.0 / np.arange(1, len(sites) * 4 + 1) ** 1.2
    news: list[tuple[str, str, str]] = []
    listings: list[list[str]] = []
    docs = []
    for k, kind in enumerate(kinds.tolist()):
        site = sites[int(rng.integers(len(sites)))]
        if kind == "syndicated" and not news:
            kind = "news"
        if kind == "listing" and not site["products"]:
            kind = "product"
        if kind == "news":
            title = w.title(int(rng.integers(4, 11)))
            body = w.prose(int(_log_uniform(rng, 150, 3000)))
            byline = f"{authors[int(rng.integers(len(authors)))]}, {_date(rng)}"
            news.append((title, body, byline))
            main = _article(title, f"By {byline}", body)
        elif kind == "syndicated":
            title, body, byline = news[int(rng.integers(len(news)))]
            if rng.random() < 0.4:  # a teaser: the first paragraphs and a link
                paragraphs = body.split("\n")
                body = "\n".join(paragraphs[: max(1, len(paragraphs) // 3)]) + "\n<p>Read more</p>"
            main = _article(title, byline, body)
        elif kind == "product":
            main = _product_page(site, w)
        elif kind == "listing":
            if listings and rng.random() < 0.5:  # a later snapshot of a listing: a few items changed
                items = list(listings[int(rng.integers(len(listings)))])
                for _ in range(int(rng.integers(1, 1 + max(1, len(items) // 5)))):
                    items[int(rng.integers(len(items)))] = _listing_item(site, w)
            else:
                items = [_listing_item(site, w) for _ in range(int(rng.integers(10, 60)))]
            listings.append(items)
            main = (
                "<main><h1>"
                + w.title(2)
                + "</h1>\n<ul class='products'>\n"
                + "".join(items)
                + "</ul></main>\n"
            )
        else:
            which = int(rng.choice(len(stub_p), p=stub_p / stub_p.sum()))
            site = sites[which // 4]
            main = stubs[which // 4][which % 4]
        text = site["header"] + main + (site["sidebar"] if kind != "stub" else "") + site["footer"]
        docs.append(_doc("template", f"{site['domain']}/{kind}/{k}", text))
    return docs


def _article(title: str, byline: str, body: str) -> str:
    return f"<main><article><h1>{title}</h1>\n<p class='byline'>{byline}</p>\n{body}\n</article></main>\n"


def _date(rng: np.random.Generator) -> str:
    return f"{int(rng.integers(2005, 2025))}-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}"


def _product_page(site: dict[str, Any], w: _Words) -> str:
    rng = w.rng
    name = w.title(int(rng.integers(2, 4)))
    price = f"{rng.integers(1, 2000)}.{rng.integers(0, 100):02d}"
    site["products"].append((name, price))
    values = [w.words(1)[0] if rng.random() < 0.5 else str(rng.integers(1, 100)) for _ in site["attributes"]]
    specs = "".join(f"<tr><th>{a}</th><td>{v}</td></tr>\n" for a, v in zip(site["attributes"], values))
    also = site["products"][-6:-1]
    return (
        f"<main><div class='product'><h1>{name}</h1>\n"
        f"<p class='price'>Price: ${price}</p>\n<p>SKU {int(rng.integers(10**6, 10**7))}</p>\n"
        f"<p>Rating {rng.integers(1, 6)} of 5 ({int(rng.integers(0, 900))} reviews)</p>\n"
        "<button>Add to basket</button>\n<table class='specs'>\n"
        + specs
        + "</table>\n<h2>Description</h2>\n"
        + w.prose(int(_log_uniform(rng, 15, 200)))
        + "\n<h2>Customers also bought</h2>\n<ul>"
        + "".join(f"<li>{n} ${p}</li>" for n, p in also)
        + "</ul></div></main>\n"
    )


def _listing_item(site: dict[str, Any], w: _Words) -> str:
    name, price = site["products"][int(w.rng.integers(len(site["products"])))]
    return f"<li><a href='/p/{name.lower().replace(' ', '-')}'>{name}</a> <span>${price}</span></li>\n"


_SCHEMAS = {
    "people": ("id", "name", "city", "country", "joined", "score"),
    "sales": ("date", "region", "product", "units", "unit_price", "total"),
    "sensor": ("timestamp", "station", "temperature", "humidity", "pressure"),
    "inventory": ("sku", "item", "warehouse", "qty", "reorder_level"),
    "league": ("rank", "team", "played", "won", "drawn", "lost", "points"),
}


def _row(schema: str, i: int, w: _Words, names: list[str]) -> list[str]:
    rng = w.rng

    def pick() -> str:
        return names[int(rng.integers(len(names)))]

    if schema == "people":
        return [str(i), f"{pick()} {pick()}", pick(), pick(), _date(rng), f"{rng.normal(50, 15):.1f}"]
    if schema == "sales":
        units = int(rng.integers(1, 500))
        price = round(float(rng.uniform(1, 300)), 2)
        return [_date(rng), pick(), pick(), str(units), f"{price:.2f}", f"{units * price:.2f}"]
    if schema == "sensor":
        return [
            f"{_date(rng)}T{int(rng.integers(0, 24)):02d}:{int(rng.integers(0, 60)):02d}",
            f"ST{int(rng.integers(1, 40)):03d}",
            f"{rng.normal(15, 8):.2f}",
            f"{rng.uniform(10, 100):.1f}",
            f"{rng.normal(1013, 9):.1f}",
        ]
    if schema == "inventory":
        return [
            f"SKU{int(rng.integers(10**5, 10**6))}",
            f"{pick()} {pick()}",
            pick(),
            str(int(rng.integers(0, 999))),
            str(int(rng.integers(5, 50))),
        ]
    played = int(rng.integers(10, 40))
    won = int(rng.integers(0, played + 1))
    drawn = int(rng.integers(0, played - won + 1))
    return [
        str(i + 1),
        f"{pick()} {pick()}",
        str(played),
        str(won),
        str(drawn),
        str(played - won - drawn),
        str(3 * won + drawn),
    ]


def _render_table(columns: tuple[str, ...], rows: list[list[str]], style: str) -> str:
    if style == "csv":
        return "\n".join(",".join(r) for r in [list(columns), *rows]) + "\n"
    if style == "tsv":
        return "\n".join("\t".join(r) for r in [list(columns), *rows]) + "\n"
    if style == "markdown":
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"
    return "\n".join(f"- {r[1]} ({', '.join(r[:1] + r[2:])})" for r in rows) + "\n"  # a list


def _tables(count: int, vocab: list[str], weights: np.ndarray, rng: np.random.Generator) -> list[dict]:
    """``count`` tables in families: a base table of 3-1,500 rows (log-uniform) and 0-6
    revisions, each the one before with some cells changed, rows deleted, inserted, appended."""
    if count <= 0:
        return []
    w = _Words(vocab, weights, rng)
    names = [name.capitalize() for name in w.words(3000)]
    docs: list[dict[str, str]] = []
    family = 0
    while len(docs) < count:
        schema = str(rng.choice(list(_SCHEMAS)))
        columns = _SCHEMAS[schema]
        style = str(rng.choice(["csv", "tsv", "markdown", "list"], p=[0.5, 0.15, 0.2, 0.15]))
        n_rows = int(_log_uniform(rng, 3, 1500))
        rows = [_row(schema, i, w, names) for i in range(n_rows)]
        for revision in range(min(int(rng.geometric(0.35)), 7, count - len(docs))):
            if revision:
                rows = _revise(rows, schema, w, names)
            text = _cap(_render_table(columns, rows, style))
            docs.append(_doc("table", f"{schema}-{family}/{style}/r{revision}", text))
        family += 1
    return docs


def _revise(rows: list[list[str]], schema: str, w: _Words, names: list[str]) -> list[list[str]]:
    rng = w.rng
    rows = [list(r) for r in rows]
    rate = _log_uniform(rng, 0.005, 0.2)
    for i in np.flatnonzero(rng.random(len(rows)) < rate).tolist():
        fresh = _row(schema, i, w, names)
        col = int(rng.integers(1, len(fresh)))
        rows[i][col] = fresh[col]
    keep = rng.random(len(rows)) >= rate / 2
    rows = [r for r, k in zip(rows, keep.tolist()) if k] or rows[:1]
    for _ in range(int(rng.binomial(len(rows), rate / 2))):
        rows.insert(int(rng.integers(len(rows) + 1)), _row(schema, len(rows), w, names))
    rows += [_row(schema, len(rows) + j, w, names) for j in range(int(rng.integers(0, 1 + len(rows) // 10)))]
    return rows


def _edited_copies(
    docs: list[dict[str, str]], count: int, vocab: list[str], weights: np.ndarray, rng: np.random.Generator
) -> list[dict]:
    """``count`` copies of documents of at least 20 words (seeded choice, any kind), each word
    edited with probability r, log-uniform in EDIT_RATES: substituted, deleted or followed by an
    inserted word (a third each). Separators between words are kept."""
    sources = [d for d in docs if len(d["text"].split(None, 20)) > 20]
    if count <= 0 or not sources:
        return []
    w = _Words(vocab, weights, rng)
    copies = []
    for k in range(count):
        source = sources[int(rng.integers(len(sources)))]
        rate = _log_uniform(rng, *EDIT_RATES)
        parts = re.split(r"(\s+)", source["text"])
        words = parts[0::2]
        chosen = np.flatnonzero(rng.random(len(words)) < rate)
        ops = rng.integers(0, 3, size=len(chosen))
        fresh = w.words(len(chosen))
        for i, op, new in zip(chosen.tolist(), ops.tolist(), fresh):
            words[i] = new if op == 0 else "" if op == 1 else f"{words[i]} {new}"
        parts[0::2] = words
        text = "".join(parts)
        copies.append(_doc(source["kind"], f"edit{k}-r{round(100 * rate)}/{source['id']}", text))
    return copies
