"""Synthetic corpora with planted near-duplicates at known edit rates, in four scripts; and the
small readable corpus of ``neardup dedup --example`` (:func:`example_corpus`).

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
never ``hash()`` or set order; ``tests/pipeline/test_planted.py`` pins a digest of a corpus.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import itertools
import math
import random
import re
import textwrap
from collections.abc import Callable, Iterator
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


# --- the demo corpus ------------------------------------------------------------------------

EXAMPLE_SOURCES = (
    "difflib.SequenceMatcher",
    "gettext",
    "sched",
    "timeit",
    "tempfile",
    "os.walk",
    "functools.lru_cache",
    "random.Random",
    "threading.Thread",
    "copy",
    "tokenize",
    "shutil.copytree",
    "glob.glob",
    "pdb",
    "doctest",
    "calendar",
    "heapq",
    "cmd",
    "bisect.bisect_right",
    "abc.ABCMeta",
    "weakref.WeakKeyDictionary",
    "shutil.move",
    "functools.reduce",
)
"""Standard-library objects, present in CPython 3.10-3.13, whose docstrings hold prose. The
example takes an English original from each of the first :data:`EXAMPLE_DOCSTRINGS` that has
one; a missing object or docstring (``python -OO`` strips most) is skipped."""

EXAMPLE_DOCSTRINGS = 16
_EXAMPLE_RADIUS = 3  # dedup's default radius for 64-bit fingerprints: the example shows it

_EXAMPLE_TEXTS = {  # our own paragraphs: a library, a late spring and a train ride in each script
    "en": {
        "library": "The city library is open every day except Monday. The reading room is quiet and "
        "bright, and the shelves hold books on history, geography and art. Many students come here early "
        "in the morning to find a seat by the window. The librarians are always ready to help find a book"
        " or an old magazine. In the evenings there are often lectures and meetings with writers, and "
        "many people come to them. In summer the library stays open until eight in the evening. A "
        "children's room opened recently, where little ones listen to stories and draw.",
        "spring": "Spring came late this year. In April there was still snow in the streets, and the "
        "rivers were covered with ice. Only at the beginning of May did it become really warm, and the "
        "first leaves appeared on the trees. Children are playing in the yards again, and old people sit "
        "on the benches in the sun. Gardeners are hurrying to plant potatoes and vegetables while the "
        "ground is still wet. The birds have come back from the south and sing in the gardens from "
        "morning till night. At the market they already sell the first greens, radishes and fresh honey.",
        "train": "The train from the capital to the coast takes about four hours. Passengers read, work "
        "on their laptops or simply look out of the window at the forests and fields. In the dining car "
        "you can drink tea and eat a hot lunch. Many people choose the train rather than the plane, "
        "because the stations are in the middle of the city and there is no long trip to the airport. It "
        "is best to buy tickets in advance, especially in summer and before holidays. From the train "
        "window you can see small villages, old churches and wide rivers.",
    },
    "ru": {
        "library": "Городская библиотека открыта каждый день, кроме понедельника. В читальном зале тихо и"
        " светло, а на полках стоят книги по истории, географии и искусству. Многие студенты приходят "
        "сюда рано утром, чтобы занять место у окна. Библиотекари всегда готовы помочь найти нужную книгу"
        " или старый журнал. По вечерам здесь часто проходят лекции и встречи с писателями, и на них "
        "приходит много людей. Летом библиотека работает до восьми часов вечера, а зимой закрывается "
        "раньше. Недавно здесь открыли детский зал, где малыши слушают сказки и рисуют.",
        "spring": "Весна в этом году пришла поздно. Ещё в апреле на улицах лежал снег, а реки были "
        "покрыты льдом. Только в начале мая стало по-настоящему тепло, и на деревьях появились первые "
        "листья. Дети снова играют во дворах, а старики сидят на скамейках и греются на солнце. Садоводы "
        "торопятся посадить картофель и овощи, пока земля ещё влажная. Птицы вернулись с юга и с утра до "
        "вечера поют в садах. На рынке уже продают первую зелень, редиску и свежий мёд.",
        "train": "Поезд из Москвы в Санкт-Петербург идёт около четырёх часов. Пассажиры читают, работают "
        "на ноутбуках или просто смотрят в окно на леса и поля. В вагоне-ресторане можно выпить чаю и "
        "съесть горячий обед. Многие выбирают поезд, а не самолёт, потому что вокзалы находятся в центре "
        "города и не нужно долго ехать в аэропорт. Билеты лучше покупать заранее, особенно летом и перед "
        "праздниками. Из окна поезда видно маленькие деревни, старые церкви и широкие реки.",
    },
    "zh": {
        "library": "城市图书馆每天早上八点开门，晚上九点关门。阅览室里很安静，书架上摆满了历史、地"
        "理和艺术方面的书。很多学生一大早就来到这里，找一个靠窗的座位读书。图书管理员总是很乐意帮"
        "助读者寻找需要的书和旧杂志。每到周末，这里还会举办讲座和读书会，吸引许多市民参加。夏天的"
        "时候，图书馆一直开到晚上十点。最近这里还开了一间儿童阅览室，孩子们可以在那里听故事、画画"
        "。",
        "spring": "今年的春天来得特别晚。四月的时候，街上还有积雪，河面上也结着冰。直到五月初，天"
        "气才真正暖和起来，树上长出了新的叶子。孩子们又在院子里玩耍，老人们坐在长椅上晒太阳。农民"
        "们忙着在田里种土豆和蔬菜，希望今年能有一个好收成。燕子从南方飞回来了，从早到晚在花园里唱"
        "歌。市场上已经开始卖新鲜的青菜、萝卜和蜂蜜。",
        "train": "从北京到上海坐高铁大约需要四个半小时。乘客们有的看书，有的用电脑工作，有的只是望"
        "着窗外的田野和村庄。在餐车里可以买到热茶和简单的饭菜。许多人选择坐火车而不是坐飞机，因为"
        "火车站就在市中心，不用花很长时间去机场。最好提前买票，特别是在暑假和节日前后。从车窗望出"
        "去，可以看到小小的村庄、古老的寺庙和宽阔的河流。",
    },
    "ar": {
        "library": "تفتح مكتبة المدينة أبوابها كل يوم ما عدا يوم الاثنين. قاعة القراءة هادئة ومضيئة، وعلى"
        " الرفوف كتب في التاريخ والجغرافيا والفن. يأتي كثير من الطلاب في الصباح الباكر ليجلسوا بجانب "
        "النافذة. ويساعد أمناء المكتبة القراء دائما في العثور على الكتب والمجلات القديمة. وفي المساء تقام"
        " هنا محاضرات ولقاءات مع الكتاب، ويحضرها عدد كبير من الناس. وفي الصيف تبقى المكتبة مفتوحة حتى "
        "الساعة الثامنة مساء. وقد افتتحت مؤخرا قاعة للأطفال يستمعون فيها إلى الحكايات ويرسمون.",
        "spring": "جاء الربيع متأخرا هذا العام. ففي شهر أبريل كان الثلج لا يزال في الشوارع، وكانت الأنهار"
        " مغطاة بالجليد. ولم يصبح الجو دافئا حقا إلا في بداية شهر مايو، فظهرت الأوراق الأولى على الأشجار."
        " عاد الأطفال يلعبون في الساحات، وجلس كبار السن على المقاعد في الشمس. ويسرع المزارعون إلى زراعة "
        "البطاطس والخضروات ما دامت الأرض رطبة. وعادت الطيور من الجنوب وأخذت تغرد في الحدائق من الصباح حتى"
        " المساء. وفي السوق تباع الآن الخضار الطازجة والعسل الجديد.",
        "train": "تستغرق الرحلة بالقطار من القاهرة إلى الإسكندرية نحو ثلاث ساعات. يقرأ بعض الركاب أو "
        "يعملون على حواسيبهم، بينما ينظر آخرون من النافذة إلى الحقول والقرى. وفي عربة الطعام يمكن شرب "
        "الشاي وتناول وجبة ساخنة. ويفضل كثير من الناس القطار على الطائرة، لأن المحطات تقع في وسط المدينة."
        " ومن الأفضل شراء التذاكر مبكرا، خاصة في الصيف وقبل الأعياد. ومن نافذة القطار يرى المسافر قرى "
        "صغيرة ونخيلا وقنوات ماء.",
    },
}

_WORD_SWAPS = {  # script -> kind -> "word>replacement, ...": edits that leave a text readable
    "en": {
        "substitute": "a>the, an>the, is>was, are>were, can>could, may>might, will>would, "
        "this>that, and>or, or>and, all>any, each>every, must>should, never>not, which>that, "
        "if>when, when>if, function>routine, file>document, list>sequence, called>invoked, "
        "returns>gives, use>employ, new>fresh, first>initial, last>final, given>supplied, "
        "number>count, example>instance, small>little, large>big",
        "insert": "is>is also, are>are also, can>can also, may>may also",
        "delete": "also>, only>, just>, then>, optional>, very>, simply>, all>, always>, still>, often>",
    },
    "ru": {
        "substitute": "старый>редкий, часто>иногда, много>немало, горячий>вкусный, леса>луга, "
        "картофель>морковь, дворах>парках, около>почти, скамейках>лавочках, "
        "Пассажиры>Путешественники, книги>словари, маленькие>тихие, широкие>быстрые, свежий>липовый, "
        "сказки>стихи, Птицы>Скворцы, деревни>сёла",
        "insert": "светло>очень светло, играют>весело играют, поля>поля и реки, слушают>внимательно слушают",
        "delete": "всегда>, просто>, снова>, долго>, ещё>, по-настоящему>, уже>, первую>",
    },
    "zh": {  # no spaces: a word is matched anywhere
        "substitute": "很多>许多, 许多>很多, 特别>格外, 大约>大概, 简单的>可口的, 热茶>咖啡, "
        "孩子们>小朋友们, 总是>一直, 真正>真的, 土豆>玉米, 长椅>石凳, 乐意>愿意, 旧杂志>老杂志, "
        "燕子>鸟儿, 萝卜>黄瓜, 古老的>安静的, 宽阔的>清澈的, 故事>童话",
        "insert": "读书。>安静地读书。, 玩耍>开心地玩耍, 电脑>笔记本电脑, 画画。>画画和唱歌。",
        "delete": "很安静>安静, 特别晚>晚, 还会>会, 也结着冰>结着冰, 已经>, 小小的>小",
    },
    "ar": {
        "substitute": "كبير>ضخم, القديمة>النادرة, هادئة>واسعة, نحو>حوالي, ساخنة>خفيفة, "
        "الشاي>القهوة, البطاطس>الذرة, الساحات>الحدائق, المقاعد>الكراسي, الحقول>الجبال, الطازجة>الخضراء, "
        "الجديد>الطبيعي, صغيرة>جميلة",
        "insert": "النافذة>النافذة الكبيرة, الشمس>الشمس الدافئة",
        "delete": "حقا>, دائما>, الباكر>, هنا>, مؤخرا>, الآن>, القديمة>, كبير>, الأولى>, صغيرة>",
    },
}

_BEYOND, _FAR = (5, 4, 6, 7), tuple(range(12, 65))
_EXAMPLE_VARIANTS: tuple[tuple[str, int, str, int | tuple[int, ...]], ...] = (
    # (script, original: its rank among the script's, longest first, kind, format style or distances)
    ("en", 0, "format", 0),
    ("en", 0, "substitute", (2, 1, 3)),
    ("en", 1, "format", 1),
    ("en", 2, "substitute", (1, 2, 3)),
    ("en", 3, "substitute", (3, 2, 1)),
    ("en", 4, "insert", (2, 3, 1)),
    ("en", 5, "delete", (1, 2, 3)),
    ("en", 6, "boilerplate", (3, 2, 1)),
    ("en", 7, "mixed", _BEYOND),
    ("en", 8, "mixed", _FAR),
    ("en", 9, "format", 2),
    ("ru", 0, "format", 0),
    ("ru", 1, "substitute", (2, 1, 3)),
    ("ru", 2, "mixed", _BEYOND),
    ("zh", 0, "format", 0),
    ("zh", 1, "boilerplate", (1, 2, 3)),
    ("zh", 2, "substitute", (3, 2, 1)),
    ("ar", 0, "format", 0),
    ("ar", 1, "boilerplate", (2, 1, 3)),
    ("ar", 2, "mixed", _FAR),
)
"""A ``"format"`` variant's style (each lands at distance 0); another kind's distances, which
:func:`_sought_variant` aims at: 1-3 is near under the default radius of 3 bits, ``_BEYOND``
just too far, ``_FAR`` plainly different."""


def _docstring_original(source: str) -> str | None:
    """Prose paragraphs of ``source``'s own docstring (not an inherited one), 40-220 words,
    each on one line; ``None`` if the object, its docstring or enough prose is missing."""
    module, _, path = source.partition(".")
    try:
        obj: object = importlib.import_module(module)
        for name in path.split(".") if path else ():
            obj = getattr(obj, name)
    except (ImportError, AttributeError):
        return None
    doc = obj.__doc__ if isinstance(obj.__doc__, str) else ""
    chosen: list[str] = []
    n_words = 0
    for block in inspect.cleandoc(doc).split("\n\n"):
        lines = block.strip("\n").split("\n")
        paragraph = " ".join(" ".join(lines).split())
        letters = [c for c in paragraph if not c.isspace()]
        prose = (
            not any(line[:1].isspace() for line in lines)  # code, tables and lists are indented
            and ">>>" not in paragraph
            and paragraph[:1].isupper()
            and paragraph.endswith(".")
            and sum(c.isalpha() for c in letters) >= 0.85 * len(letters)
            and sum(c.isupper() for c in letters) < 0.2 * len(letters)  # no licence in capitals
        )
        size = len(paragraph.split())
        if prose and (n_words < 40 or n_words + size <= 220):
            chosen.append(paragraph)
            n_words += size
        if n_words >= 150:
            break
    return "\n\n".join(chosen) if n_words >= 40 else None


def _tokens(text: str) -> list[str]:
    """Roughly the fingerprint's tokens: a Chinese ideograph alone, else a run of letters."""
    return re.findall(r"[\u3400-\u9fff]|[^\W\u3400-\u9fff]+", text)


def _reformat(text: str, script: str, style: int) -> str:
    """``text`` re-cased, re-punctuated or re-wrapped: the same words once normalised."""
    if script == "zh":
        return text.replace(_COMMA["zh"], "\u3001").replace(_PERIOD["zh"], _PERIOD["zh"] + "\n")
    if script == "ar":
        return text.replace(_COMMA["ar"], "").replace(". ", ".\n")
    paragraphs = text.split("\n\n")
    if style == 0:  # lower case, no commas: as a careless copy has it
        return re.sub(r",(?=\s|$)", "", text.lower())
    if style == 1:  # a headline in capitals, the text hard-wrapped as in an e-mail
        first, _, rest = paragraphs[0].partition(". ")
        paragraphs[0] = f"{first.upper()}. {rest}" if rest else first.upper()
        wrap = textwrap.TextWrapper(60, break_long_words=False, break_on_hyphens=False)
        return "\n\n".join(wrap.fill(p) for p in paragraphs)
    # Every word capitalised, a sentence a line: as a slide has it.
    return "\n\n".join(
        re.sub(r"(?<!\S)(\w)", lambda m: m[1].upper(), p).replace(". ", ".\n") for p in paragraphs
    )


def _format_edits(text: str, variant: str, script: str) -> int:
    """Words (ideographs or marks, in Chinese) re-cased or re-punctuated, and line breaks added."""
    a, b = (("".join(t.split()) if script == "zh" else t.split()) for t in (text, variant))
    return sum(x != y for x, y in zip(a, b)) + variant.count("\n") - text.count("\n")


def _edit_spans(text: str, script: str, kind: str) -> list[tuple[int, int, str]]:
    """Every place one readable edit of ``kind`` can go: (start, end, replacement), sorted."""
    if kind == "boilerplate":  # one or two lines of site furniture, before or after the text
        lines = [line.replace(" ", "") if script == "zh" else line for line in _BOILERPLATE[script]]
        blocks = lines + [f"{a}\n{b}" for a, b in itertools.pairwise(lines)]
        return [(0, 0, f"{b}\n\n") for b in blocks] + [(len(text), len(text), f"\n\n{b}") for b in blocks]
    kinds = _WORD_EDITS if kind == "mixed" else (kind,)
    spans = []
    for swaps in (_WORD_SWAPS[script][k] for k in kinds):
        for old, new in (swap.split(">") for swap in swaps.split(", ")):
            pattern = re.escape(old) if script == "zh" else rf"(?<![\w'.-]){re.escape(old)}(?![\w'.-])"
            for match in re.finditer(pattern, text):
                start, end = match.span()
                if not new and script != "zh":  # a deleted word takes a space with it
                    if text[end : end + 1] == " ":
                        end += 1
                    elif text[start - 1 : start] == " ":
                        start -= 1
                spans.append((start, end, new))
    return sorted(spans)


def _subsets(rng: random.Random, n: int, k: int, most: int) -> list[tuple[int, ...]]:
    """Up to ``most`` distinct ``k``-subsets of ``range(n)``, sorted tuples in random order."""
    if k > n:
        return []
    if math.comb(n, k) <= most:
        every = list(itertools.combinations(range(n), k))
        rng.shuffle(every)
        return every
    chosen: dict[tuple[int, ...], None] = {}
    for _ in range(4 * most):
        chosen[tuple(sorted(_sample(rng, list(range(n)), k)))] = None
        if len(chosen) == most:
            break
    return list(chosen)


def _apply(text: str, spans: list[tuple[int, int, str]]) -> str | None:
    """``text`` with the (sorted) ``spans`` replaced; ``None`` if two of them overlap."""
    out, last = [], 0
    for start, end, new in spans:
        if start < last:
            return None
        out += [text[last:start], new]
        last = end
    return "".join([*out, text[last:]])


def _sought_variant(
    rng: random.Random,
    text: str,
    script: str,
    kind: str,
    sought: tuple[int, ...],
    fingerprint: Callable[[list[str]], np.ndarray],
) -> tuple[str, int]:
    """A variant of ``text`` with edits of ``kind`` at a Hamming distance in ``sought`` (the
    earlier the better), and how many edits it has; failing that, the closest one.

    Tries one edit, then two, and so on (up to three for a near distance), a few dozen tries
    each, and keeps the fewest edits. The search is what keeps the example's distances spread
    whatever this Python's docstrings say; each edit is an ordinary one."""
    spans = _edit_spans(text, script, kind)
    near = min(sought) <= _EXAMPLE_RADIUS
    texts: list[str] = [text]
    tried: list[int] = [0]
    for k in range(1, min(len(spans), 1 if kind == "boilerplate" else 3 if near else len(spans)) + 1):
        for subset in _subsets(rng, len(spans), k, 96 if near else 48):
            variant = _apply(text, [spans[i] for i in subset])
            if variant is not None:
                texts.append(variant)
                tried.append(k)
    fps = fingerprint(texts)
    distances = [(int(fp) ^ int(fps[0])).bit_count() for fp in fps]

    def rank(i: int) -> tuple[int, int, int]:
        d = distances[i]
        return (
            sought.index(d) if d in sought else len(sought) + min(abs(d - s) for s in sought),
            tried[i],
            i,
        )

    best = min(range(1, len(texts)), key=rank)
    return texts[best], tried[best]


def example_corpus() -> list[PlantedDoc]:
    """A small fixed corpus for demos (``neardup dedup --example``), of readable text: 48
    documents, shuffled.

    Originals (28): English paragraphs, 40-220 words, from the docstrings of the first 16 of
    :data:`EXAMPLE_SOURCES` that have them (id ``"en-difflib.SequenceMatcher"``), and texts of
    our own (a library, a late spring, a train ride) in each of English, Russian, Chinese and
    Arabic (id ``"ru-spring"``). Translations are not near-duplicates of each other.

    Variants (20, id ``"<original>-v<n>"``), chosen to show what *near* means under the
    default fingerprint (64 bits, word 3-shingles) and radius (3 bits):

    - ``"format"``: re-cased, re-punctuated or re-wrapped: distance 0.
    - ``"substitute"``, ``"insert"``, ``"delete"``: one to three words changed, added or
      removed; ``"boilerplate"``: a line or two of site furniture added: aimed at distances
      1-3, found.
    - ``"mixed"``: word edits of any kind, as few as land at distance 4-7 (just beyond the
      radius: one word can be enough in a short text) or 12 and more: not found.

    Which words are edited is searched for (see :func:`_sought_variant`), so the text is the
    same on every run of one Python, and the distances stay spread when a docstring changes
    between Python versions. Under ``python -OO``, which strips most docstrings, fewer English
    originals remain, with the variants that fit. Computing it fingerprints a few hundred candidate texts: the
    first call in a process compiles (or loads) the fingerprint kernels.
    """
    from ..fingerprint.fingerprinter import Fingerprinter

    fingerprinter = Fingerprinter()

    def fingerprint(texts: list[str]) -> np.ndarray:
        return fingerprinter.fingerprint_batch(texts, n_jobs=1)

    originals: dict[str, list[tuple[str, str]]] = {script: [] for script in SCRIPTS}
    for source in EXAMPLE_SOURCES:
        text = _docstring_original(source)
        if text is not None and len(originals["en"]) < EXAMPLE_DOCSTRINGS:
            originals["en"].append((f"en-{source}", text))
    for script, texts in _EXAMPLE_TEXTS.items():
        originals[script] += [(f"{script}-{topic}", text) for topic, text in texts.items()]
    docs = [
        PlantedDoc(name, text, name, None, 0.0, script)
        for script in SCRIPTS
        for name, text in originals[script]
    ]
    numbers: dict[str, int] = {}
    for script, index, kind, sought in _EXAMPLE_VARIANTS:
        if index >= len(originals[script]):
            continue
        # Longest first: a small edit moves few bits of a long text, so near needs one.
        name, text = sorted(originals[script], key=lambda o: -len(_tokens(o[1])))[index]
        number = numbers[name] = numbers.get(name, 0) + 1
        n_tokens = len(_tokens(text))
        if isinstance(sought, int):
            variant = _reformat(text, script, sought)
            edits = _format_edits(text, variant, script)
        else:
            rng = random.Random(f"neardup.planted/example/{name}/{number}")
            variant, edits = _sought_variant(rng, text, script, kind, sought, fingerprint)
            if kind == "boilerplate":
                edits = len(_tokens(variant)) - n_tokens
        rate = round(min(1.0, edits / n_tokens), 3)
        docs.append(PlantedDoc(f"{name}-v{number}", variant, name, kind, rate, script))
    random.Random("neardup.planted/example/order").shuffle(docs)
    return docs
