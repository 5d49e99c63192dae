"""Synthetic corpora with planted near-duplicates at known edit rates, in four scripts.

Each original is a document of Zipf-distributed words (rank^-1 over a generated vocabulary of
30,000 words per script, Zipf 1949), in sentences of 8-20 words and paragraphs of 3-6 sentences.
Each variant is a copy of an original with edits of one kind at a known rate, so a detection
benchmark can report precision and recall by edit kind, rate and script.

    >>> docs = planted_corpus(2, edit_rates=(0.05,), seed=1)
    >>> [(d.id, d.edit_kind) for d in docs]
    [('en-000001', None), ('en-000000', None), ('en-000000-v1', 'mixed'), ('en-000001-v1', 'mixed')]
    >>> planted_pairs(docs)
    [(0, 3), (1, 2)]

Determinism: the same arguments give the same corpus on every machine and Python >= 3.10. The
generator uses only ``random.Random`` seeded by strings (sha512, kept by Python's seeding
guarantee) and its ``random``, ``randrange``, ``choice``, ``shuffle`` and ``getrandbits``, and
never ``hash()`` or set order; ``tests/planted/test_planted.py`` pins a digest of a corpus.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError

SCRIPTS = ("en", "ru", "zh", "ar")
EDIT_KINDS = ("substitute", "insert", "delete", "mixed", "reorder", "boilerplate", "format")
VOCAB_SIZE = 30_000
_WORD_EDITS = ("substitute", "insert", "delete")  # what "mixed" mixes

Doc = list[list[list[str]]]
"""A document under edit: paragraphs of sentences of tokens (a word, maybe a trailing comma)."""


@dataclass(frozen=True)
class PlantedDoc:
    """One document of a planted corpus.

    Attributes:
        id: stable name, ``"en-000012"`` for an original, ``"en-000012-v1"`` for its variants.
        text: the document.
        original: id of the original it was made from; its own id for an original.
        edit_kind: one of :data:`EDIT_KINDS`, ``None`` for an original.
        edit_rate: the requested fraction of the original's words edited; 0.0 for an original.
        script: ``"en"``, ``"ru"``, ``"zh"`` or ``"ar"``.
    """

    id: str
    text: str
    original: str
    edit_kind: str | None
    edit_rate: float
    script: str


# --- vocabularies ---------------------------------------------------------------------------

_ENGLISH = """the of and to a in is it you that he was for on are with as his they be at one have
this from or had by not word but what some we can out other were all there when up use your how
said an each she which do their time if will way about many then them write would like so these
her long make thing see him two has look more day could go come did number sound no most people
my over know water than call first who may down side been now find any new work part take get
place made live where after back little only round man year came show every good me give our
under name very through just form sentence great think say help low line differ turn cause much
mean before move right boy old too same tell does set three want air well also play small end put
home read hand port large spell add even land here must big high such follow act why ask men
change went light kind off need house picture try us again animal point mother world near build
self earth father head stand own page should country found answer school grow study still learn
plant cover food sun four between state keep eye never last let thought city tree cross farm hard
start might story saw far sea draw left late run while press close night real life few north"""

_LETTERS = {  # (onsets, nuclei, codas) of pseudo-syllables
    "en": (
        "b c d f g h j k l m n p r s t v w z st tr pl br ch sh th gr cl",
        "a e i o u ea ou ai",
        "- n r s t l nd st ng m",
    ),
    "ru": ("б в г д ж з к л м н п р с т ф х ц ч ш щ ст пр кр", "а е и о у ы э ю я", "- н т й л р с к м ть"),
}
_ARABIC = "ابتثجحخدذرزسشصضطظعغفقكلمنهوي"  # U+0627..U+064A less the rare and the tatweel
_COMMA = {"en": ",", "ru": ",", "zh": "\uff0c", "ar": "\u060c"}
_PERIOD = {"en": ".", "ru": ".", "zh": "\u3002", "ar": "."}
_CASED = ("en", "ru")


@dataclass(frozen=True)
class _Vocab:
    words: np.ndarray  # object, shape (VOCAB_SIZE,): most frequent first
    thresholds: np.ndarray  # uint64, shape (VOCAB_SIZE,): Zipf CDF scaled to 2**32


def _pseudo_word(rng: random.Random, script: str) -> str:
    if script == "zh":  # 1-2 ideographs
        return "".join(_ideographs()[int(3000 * rng.random() ** 2)] for _ in range(rng.randrange(1, 3)))
    if script == "ar":  # a consonantal skeleton, with the article on some
        word = "".join(rng.choice(_ARABIC) for _ in range(rng.randrange(2, 6)))
        word += rng.choice(("", "", "", "\u0629", "\u0649"))  # ta marbuta, alef maksura: final only
        return ("\u0627\u0644" if rng.random() < 0.3 else "") + word
    onsets, nuclei, codas = (s.split() for s in _LETTERS[script])
    syllables = (rng.choice(onsets) + rng.choice(nuclei) for _ in range(rng.randrange(1, 4)))
    return ("".join(syllables) + rng.choice(codas)).replace("-", "")


@functools.cache
def _ideographs() -> tuple[str, ...]:
    # 3,000 "common" ideographs from the URO (U+4E00..U+9FA5, all assigned since Unicode 1.1).
    rng = random.Random("neardup.planted/ideographs")
    chosen: dict[str, None] = {}
    while len(chosen) < 3000:
        chosen[chr(rng.randrange(0x4E00, 0x9FA6))] = None
    return tuple(chosen)


@functools.cache
def _vocab(script: str) -> _Vocab:
    """The script's vocabulary, most frequent first; the same for every seed."""
    rng = random.Random(f"neardup.planted/vocab/{script}")
    seen = dict.fromkeys(_ENGLISH.split() if script == "en" else ())
    generated: dict[str, None] = {}
    while len(seen) + len(generated) < VOCAB_SIZE:
        word = _pseudo_word(rng, script)
        if word not in seen:
            generated[word] = None
    # Shorter words rank higher (Zipf's law of abbreviation); sorted() is stable.
    words = tuple(seen) + tuple(sorted(generated, key=len))
    cumulative = list(itertools.accumulate(1.0 / rank for rank in range(1, VOCAB_SIZE + 1)))
    thresholds = np.array([int(c / cumulative[-1] * 2**32) for c in cumulative], dtype=np.uint64)
    return _Vocab(np.array(words, dtype=object), thresholds)


def _draw(rng: random.Random, script: str, k: int) -> list[str]:
    """``k`` Zipf-distributed words: one ``getrandbits`` call and a binary search, ~10x faster
    than ``random.choices`` and as stable (integer thresholds, no float rounding)."""
    if k == 0:
        return []
    vocab = _vocab(script)
    draws = np.frombuffer(rng.getrandbits(32 * k).to_bytes(4 * k, "little"), dtype="<u4")
    return vocab.words[np.searchsorted(vocab.thresholds, draws, side="right")].tolist()


# --- originals and rendering ----------------------------------------------------------------


def _original(rng: random.Random, script: str, n_words: int) -> Doc:
    """A document of exactly ``n_words`` words."""
    lengths, left = [], n_words
    while left > 0:
        length = rng.randrange(8, 21)
        length = left if left - length < 4 else length  # no stub sentence at the end
        lengths.append(length)
        left -= length
    words = iter(_draw(rng, script, n_words))
    doc: Doc = []
    paragraph_size = 0
    for length in lengths:
        sentence = list(itertools.islice(words, length))
        if length >= 10 and rng.random() < 0.6:
            sentence[rng.randrange(2, length - 2)] += _COMMA[script]
        if not doc or len(doc[-1]) == paragraph_size:
            doc.append([])
            paragraph_size = rng.randrange(3, 7)
        doc[-1].append(sentence)
    return doc


def _render(doc: Doc, script: str) -> str:
    space = "" if script == "zh" else " "
    paragraphs = []
    for paragraph in doc:
        sentences = []
        for tokens in filter(None, paragraph):
            tokens = [*tokens[:-1], tokens[-1].rstrip(_COMMA[script] + " \n\u3000")]
            if script in _CASED:
                tokens[0] = tokens[0][:1].upper() + tokens[0][1:]
            sentences.append(space.join(tokens) + _PERIOD[script])
        if sentences:
            paragraphs.append(space.join(sentences))
    # A "format" line break needs no separator after it.
    return "\n\n".join(paragraphs).replace("\n ", "\n")


# --- edits ----------------------------------------------------------------------------------


def edit_count(edit_rate: float, n_words: int) -> int:
    """Words an edit at ``edit_rate`` touches in a document of ``n_words`` words:
    ``round(edit_rate * n_words)``, at least 1 when the rate is positive, at most ``n_words``."""
    return 0 if edit_rate == 0 else min(n_words, max(1, round(edit_rate * n_words)))


def _format_token(rng: random.Random, token: str, first: bool, script: str) -> str:
    # Case, comma and whitespace edits: the words after casefolding stay the same.
    ops = ["comma", "space", "newline"] + (["upper", "title"] if script in _CASED and not first else [])
    op = rng.choice(ops)
    comma = _COMMA[script]
    if op == "comma":
        return token[:-1] if token.endswith(comma) else token + comma
    if op == "space":
        return token + ("\u3000" if script == "zh" else " ")  # and the separator: two
    if op == "newline":
        return token + "\n"
    return token.upper() if op == "upper" else token[:1].upper() + token[1:]


def _sample(rng: random.Random, population: list, m: int) -> list:
    """``m`` distinct items in random order: a partial Fisher-Yates shuffle, O(m) draws."""
    population = list(population)
    for i in range(min(m, len(population))):
        j = rng.randrange(i, len(population))
        population[i], population[j] = population[j], population[i]
    return population[:m]


def _edit_words(rng: random.Random, doc: Doc, script: str, kind: str, m: int) -> Doc:
    """``doc`` with ``m`` of its words, at random positions, edited as ``kind`` says."""
    # "format" leaves sentence-final tokens alone: rendering would undo a comma or space there.
    short = 1 if kind == "format" else 0
    sentences = [s for p in doc for s in p]
    positions = [(si, wi) for si, s in enumerate(sentences) for wi in range(len(s) - short)]
    ops: dict[int, dict[int, str]] = {}  # sentence -> word -> edit; looked up, never iterated
    for si, wi in _sample(rng, positions, m):
        ops.setdefault(si, {})[wi] = rng.choice(_WORD_EDITS) if kind == "mixed" else kind
    fresh = iter(_draw(rng, script, m))
    number = itertools.count()
    return [[_edit_sentence(rng, s, ops.get(next(number)), fresh, script) for s in p] for p in doc]


def _edit_sentence(
    rng: random.Random, sentence: list[str], ops: dict[int, str] | None, fresh: Iterator[str], script: str
) -> list[str]:
    if not ops:
        return sentence
    comma = _COMMA[script]
    out: list[str] = []
    for wi, token in enumerate(sentence):
        op = ops.get(wi)
        if op is None:
            out.append(token)
        elif op == "insert":
            out += [next(fresh), token]
        elif op == "substitute":
            word, old = next(fresh), token.rstrip(comma)
            while word == old:  # a substitute that changes nothing is no edit
                word = _draw(rng, script, 1)[0]
            out.append(word + token[len(old) :])
        elif op == "format":
            out.append(_format_token(rng, token, wi == 0, script))
    return out


def _reorder(rng: random.Random, doc: Doc, rate: float) -> Doc:
    """Swap paragraphs (sentences, in a one-paragraph document); ``rate`` sets how many swaps."""
    units: list = doc if len(doc) > 1 else doc[0]
    if len(units) < 2:
        return doc
    order = list(range(len(units)))
    for _ in range(edit_count(rate, len(units))):
        i, j = rng.randrange(len(units)), rng.randrange(len(units) - 1)
        j += j >= i  # j != i
        order[i], order[j] = order[j], order[i]
    if order == sorted(order):
        order[0], order[1] = order[1], order[0]
    moved = [units[k] for k in order]
    return moved if len(doc) > 1 else [moved]


_BOILERPLATE = {  # zh: words split by spaces here, joined when used
    "en": (
        "Home | News | Sport | Weather | Contact us",
        "Skip to main content",
        "We use cookies to improve your experience. By continuing you accept our cookie policy.",
        "Read more",
        "Share this article",
        "Sign up for our newsletter to get the latest stories",
        "Related articles",
        "Terms of use | Privacy policy | All rights reserved",
    ),
    "ru": (
        "Главная | Новости | Спорт | Погода | Контакты",
        "Перейти к содержанию",
        "Мы используем куки, чтобы сайт работал лучше. Продолжая, вы соглашаетесь с политикой.",
        "Читать далее",
        "Поделиться статьей",
        "Подпишитесь на нашу рассылку",
        "Похожие статьи",
        "Условия использования | Все права защищены",
    ),
    "ar": (
        "الرئيسية | الأخبار | الرياضة | الطقس | اتصل بنا",
        "انتقل إلى المحتوى",
        "نستخدم ملفات تعريف الارتباط لتحسين تجربتك على موقعنا.",
        "اقرأ المزيد",
        "شارك هذا المقال",
        "اشترك في النشرة البريدية",
        "مقالات ذات صلة",
        "جميع الحقوق محفوظة",
    ),
    "zh": (
        "首页 ｜ 新闻 ｜ 体育 ｜ 天气 ｜ 联系 我们",
        "跳 到 主要 内容",
        "本 网站 使用 缓存 改善 您 的 体验 ， 继续 浏览 即 表示 您 同意 我们 的 政策 。",
        "阅读 更多",
        "分享 本 文",
        "订阅 我们 的 新闻 邮件",
        "相关 文章",
        "版权 所有",
    ),
}


def _boilerplate(rng: random.Random, script: str, m: int) -> str:
    """Site furniture (nav bar, cookie notice, footer) of at least ``m`` words."""
    lines = _BOILERPLATE[script]
    start, count = rng.randrange(len(lines)), 0
    block: list[str] = []
    while count < m:
        line = lines[(start + len(block)) % len(lines)]
        count += len(re.findall(r"\w+", line))
        block.append(line.replace(" ", "") if script == "zh" else line)
    return "\n".join(block)


def _variant(rng: random.Random, doc: Doc, script: str, kind: str, rate: float) -> str:
    n_words = sum(len(s) for p in doc for s in p)
    m = edit_count(rate, n_words)
    if m == 0:
        return _render(doc, script)
    if kind == "reorder":
        return _render(_reorder(rng, doc, rate), script)
    if kind == "boilerplate":
        block, text = _boilerplate(rng, script, m), _render(doc, script)
        return f"{block}\n\n{text}" if rng.random() < 0.5 else f"{text}\n\n{block}"
    return _render(_edit_words(rng, doc, script, kind, m), script)


# --- corpora --------------------------------------------------------------------------------


def _group(
    stream: object, number: int, script: str, n_words: int, edits: list[tuple[str, float]]
) -> list[PlantedDoc]:
    # One RNG per document: an original does not depend on the corpus size or the edit settings.
    doc = _original(random.Random(f"neardup.planted/{stream}/{number}/0"), script, n_words)
    name = f"{script}-{number:06d}"
    group = [PlantedDoc(name, _render(doc, script), name, None, 0.0, script)]
    for v, (kind, rate) in enumerate(edits, 1):
        rng = random.Random(f"neardup.planted/{stream}/{number}/{v}")
        text = _variant(rng, doc, script, kind, rate)
        group.append(PlantedDoc(f"{name}-v{v}", text, name, kind, float(rate), script))
    return group


def _check(name: str, values: tuple, allowed: tuple) -> None:
    if not values or any(v not in allowed for v in values):
        raise ConfigError(f"{name}={values!r} must be a non-empty tuple of {', '.join(map(repr, allowed))}")


def planted_corpus(
    n_originals: int,
    *,
    variants_per_original: int = 1,
    edit_rates: tuple[float, ...] = (0.01, 0.02, 0.05, 0.10, 0.20, 0.40),
    edit_kinds: tuple[str, ...] = ("mixed",),
    scripts: tuple[str, ...] = ("en",),
    words_per_doc: int = 300,
    seed: int = 0,
) -> list[PlantedDoc]:
    """A corpus of ``n_originals`` originals, each with ``variants_per_original`` variants, in
    a deterministic shuffled order (duplicates are not adjacent).

    Original ``i`` is in script ``scripts[i % len(scripts)]`` and has exactly ``words_per_doc``
    words (300 English words are about 2 KB). Its variants take (kind, rate) combinations from
    ``edit_kinds`` x ``edit_rates`` in turn, counted per script, so every script gets every
    combination equally often when its originals times ``variants_per_original`` is a multiple
    of their number. A variant's edits touch :func:`edit_count` (rate, words) words:

    - ``"substitute"``, ``"insert"``, ``"delete"``: replace, insert before, or delete that many
      words; ``"mixed"``: each of those positions gets one of the three at random.
    - ``"reorder"``: swap paragraphs (sentences in a one-paragraph document), ``edit_count(rate,
      paragraphs)`` times; the words stay the same, as a multiset.
    - ``"boilerplate"``: put a block of site furniture of at least that many words before or
      after the text, which is otherwise unchanged.
    - ``"format"``: change the case of, put a comma after, or put a double space or line break
      after that many words; casefolded, the word sequence is unchanged.

    A rate of 0.0 makes an exact copy. Raises :class:`ConfigError` on an unknown script or
    kind, a rate outside [0, 1], or a count below its minimum.
    """
    for name, value, least in (
        ("n_originals", n_originals, 0),
        ("words_per_doc", words_per_doc, 1),
        ("variants_per_original", variants_per_original, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigError(f"{name}={value!r} must be an integer >= {least}")
    _check("scripts", tuple(scripts), SCRIPTS)
    _check("edit_kinds", tuple(edit_kinds), EDIT_KINDS)
    if not edit_rates or any(not 0.0 <= r <= 1.0 for r in edit_rates):
        raise ConfigError(f"edit_rates={edit_rates!r} must be a non-empty tuple of rates in [0, 1]")
    combos = [(kind, rate) for kind in edit_kinds for rate in edit_rates]
    docs = []
    for i in range(n_originals):
        first = (i // len(scripts)) * variants_per_original
        edits = [combos[(first + j) % len(combos)] for j in range(variants_per_original)]
        docs += _group(seed, i, scripts[i % len(scripts)], words_per_doc, edits)
    random.Random(f"neardup.planted/{seed}/order").shuffle(docs)
    return docs


def planted_pairs(docs: list[PlantedDoc], *, siblings: bool = True) -> list[tuple[int, int]]:
    """The planted near-duplicate pairs of ``docs``, as positions ``(i, j)`` with ``i < j``,
    sorted: every (original, variant) pair and, with ``siblings``, every pair of variants of
    the same original (whose texts differ by up to twice the edit rate). A variant whose
    original is not in ``docs`` still pairs with its siblings. Pairs that merely happen to be
    similar are not planted and are not listed, whatever their edit rate."""
    groups: dict[str, list[int]] = {}
    for position, doc in enumerate(docs):
        groups.setdefault(doc.original, []).append(position)
    pairs = []
    for name, members in groups.items():
        for i, j in itertools.combinations(members, 2):
            if siblings or name in (docs[i].id, docs[j].id):
                pairs.append((i, j))
    return sorted(pairs)
