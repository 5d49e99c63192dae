"""The small readable corpus of ``neardup dedup --example`` (:func:`example_corpus`): English
paragraphs from standard-library docstrings and texts of our own in four scripts, with variants
edited to land at chosen Hamming distances under the default fingerprint and radius.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import math
import random
import re
import textwrap
from collections.abc import Callable

import numpy as np

from .generator import _BOILERPLATE, _COMMA, _PERIOD, _WORD_EDITS, SCRIPTS, PlantedDoc, _sample

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
