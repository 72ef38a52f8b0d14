"""Which texts the service reads: the model's tokenizer, and the languages the rules know.

A text compared by meaning must be read twice: by the model, whose vector says what it is
about, and by the verifier's rules, which catch the flipped word a cosine misses ("approve" /
"reject", an added "not"). Neither happens for a text of unknown tokens (two unrelated Thai
requests are the same row of ``[UNK]`` to the model, cosine 1.0), nor for a language other
than English (the rules' word lists are English), nor for a text longer than the model's
input. :class:`TokenizerCoverage` says so, with the reason, and the canonical form then
compares such a text exactly (``dedup/canonical.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from tokenizers import Encoding, Tokenizer

from tooldedup.dedup.english.lexicon import STOP
from tooldedup.index.packaged_model import PackagedModel

__all__ = ["ENGLISH_ONLY", "TokenizerCoverage"]

ENGLISH_ONLY = "not English: the rules cover English only"

# English function words that other languages write too ("a", "do" and "as" in Portuguese,
# "in" in German, "me" in Spanish): they say nothing about which language a text is in.
# A retry sends the same texts again: each window is read once, not at every check. Windows
# are at most 120 words, so the cache stays small.
_CACHED_VERDICTS = 4096
_SHARED = frozenset("a an as do in on so am me is".split())
_ENGLISH = STOP - _SHARED
# Function words of the Latin-script languages an agent most often writes in (German,
# Spanish, French, Italian, Portuguese, Dutch) that are no English words: "und", "nicht",
# "que", "pour", "che", "não", "het". Words English uses too ("per", "con", "son", "hat",
# "est.", "op") are left out, so that English never reads as another language.
_FOREIGN = frozenset(
    """
    und nicht ist mit für sie das ein eine einen einem eines dem zum zur auf bitte wir ich
    sind wird wurde werden auch noch oder aber wenn bis vom beim ihre ihr ihnen uns unser
    kann können soll sollen muss haben habe keine kein sehr über nach bei aus heute morgen
    que por para una uno unos unas es se lo muy pero como más está están fue esta este
    estos usted une pour avec ne pas il ils elle vous nous ce cette ces dans sur au aux qui
    ou mais je sont été leur leurs votre vos notre nos merci veuillez che gli sono è dei
    delle degli nel nella alla alle anche questo questa sul della dello os não com uma em
    na nas nos ao aos pela pelo é são foi até você het een niet voor te ik wij zijn naar
    ook maar
    """.split()
)
# Articles and prepositions that also stand inside names ("José de la Cruz", "Los Angeles",
# "Le Monde"): a word of another language only before a word in lower case.
_PARTICLES = frozenset("de la le el los las da di del des du der dos von".split())
# "l'authentification", "d'activer", "qu'il", "dell'ordine": French and Italian elision.
_ELISION = re.compile(r"(?:[dlnjcs]|qu|dell|all|nell|sull|un)['\u2019][^\W\d_]")
# "we've", "don't", "Sam's": English contractions and possessives.
_CONTRACTION = re.compile(r"(?:['\u2019](?:s|ve|ll|re|d|m)|n['\u2019]t)$")
_LETTERS = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
# Addresses, paths, domains and versions say nothing about the language around them.
_ADDRESS = re.compile(r"@|://|/|\w\.\w")
_PUNCT = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb()[]{}.,;:!?\u00bf\u00a1\u2026-"
_SPLIT = re.compile(r"['\u2019-]")
# Scripts named in a reason by their Unicode names' first word, spelt for people.
_SCRIPT_NAMES = {
    "CJK": "Han (CJK)",
    "IDEOGRAPHIC": "Han (CJK)",
    "KATAKANA-HIRAGANA": "Katakana",
    "CANADIAN": "Canadian Aboriginal syllabics",
    "NKO": "N'Ko",
}
# Letters every script shares: modifier letters (an apostrophe), ordinal indicators.
_NEUTRAL = frozenset({"LATIN", "MODIFIER", "FEMININE", "MASCULINE"})
# A Greek letter alone is a symbol in English ("5 µg", "250 µs", "10 kΩ"); two make a word.
_GREEK_WORD = re.compile("[\u0370-\u03ff\u1f00-\u1fff]{2,}")


class TokenizerCoverage:
    """A :class:`~tooldedup.dedup.protocols.TextReader` built from the embedder's tokenizer.

    A text is not read when its letters are in a script other than Latin, when more than
    ``max_unknown_share`` of its tokens are unknown to the model (``[UNK]``, or characters
    the tokenizer drops), when it is longer than ``max_tokens`` (the model's input, with its
    two special tokens), or when it is not English. The last is a cheap, explainable test:
    English function words ("the", "to", "please") against those of six other languages
    ("der", "nicht", "que", "pour"); a text with neither is English when at least half its
    words in lower case are whole words of the model's vocabulary.

    The tokenizer is shared with the embedder, not copied; a text past the embedder's
    truncation is counted whole, through the encoding's overflowing parts.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        max_tokens: int = 256,
        max_unknown_share: float = 0.0,
        tokens: Callable[[str], Encoding] | None = None,
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 3:
            raise ValueError("max_tokens must be an integer of at least 3")
        if (
            isinstance(max_unknown_share, bool)
            or not isinstance(max_unknown_share, int | float)
            or not 0.0 <= max_unknown_share <= 1.0
        ):
            raise ValueError("max_unknown_share must be a number from 0 to 1")
        unknown = getattr(tokenizer.model, "unk_token", None)
        unknown_id = None if unknown is None else tokenizer.token_to_id(str(unknown))
        self._tokenizer = tokenizer
        # ``tokens``: the embedder's own encoding of a text (without special tokens), which
        # the model then reads without encoding the text again.
        self._encode = tokens if tokens is not None else self._encode_here
        # A tokenizer without a normaliser drops no character; one without an unknown
        # token (byte-level BPE) has none to give.
        self._normalizer = tokenizer.normalizer
        self._vocab = frozenset(tokenizer.get_vocab())
        self._unknown_id = -1 if unknown_id is None else unknown_id
        # [CLS] and [SEP] take two places of the model's input.
        self._max_tokens = max_tokens - 2
        self._max_unknown_share = float(max_unknown_share)
        self._verdict = lru_cache(maxsize=_CACHED_VERDICTS)(self._read)

    @classmethod
    def packaged(
        cls, model: PackagedModel | None = None, *, max_unknown_share: float = 0.0
    ) -> TokenizerCoverage:
        """From the shipped model's tokenizer file (for a service without the ONNX embedder)."""
        model = PackagedModel.load() if model is None else model
        tokenizer = Tokenizer.from_file(str(model.tokenizer_path))
        return cls(tokenizer, max_tokens=model.max_seq_length, max_unknown_share=max_unknown_share)

    @property
    def max_unknown_share(self) -> float:
        """The share of unknown tokens a text may hold and still be read."""
        return self._max_unknown_share

    def unread(self, text: str) -> str | None:
        """Why ``text`` is not read, or None when it is."""
        return self._verdict(text)

    def _read(self, text: str) -> str | None:
        return self._script(text) or self._tokens(text) or self._language(text)

    def _script(self, text: str) -> str | None:
        """Letters in a script other than Latin: the rules have no words for them."""
        if text.isascii():
            return None
        scripts: Counter[str] = Counter()
        letters = 0
        for char, count in Counter(text).items():
            if not char.isalpha() and not (char.isdigit() and not char.isascii()):
                continue  # marks go with their letters; symbols and emoji are no script
            if char.isalpha():
                letters += count
            if char.isascii():
                continue
            first = unicodedata.name(char, "").split(" ", 1)[0]
            if first in _NEUTRAL or (first == "GREEK" and not _GREEK_WORD.search(text)):
                continue
            scripts[_SCRIPT_NAMES.get(first, first.title() or "an unnamed")] += count
        if not scripts:
            return None
        named = [name for name, _ in scripts.most_common(3)]
        shown = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
        plural = "script" if len(named) == 1 else "scripts"
        if sum(scripts.values()) * 2 >= letters:
            return f"written in {shown} {plural}, which the rules do not cover"
        return f"has letters in {shown} {plural}, which the rules do not cover"

    def _tokens(self, text: str) -> str | None:
        """Unknown tokens, characters the tokenizer drops, and more tokens than the model reads."""
        # Printable ASCII is never dropped; other characters are tested once each.
        normalizer = self._normalizer
        dropped = sum(
            count
            for char, count in Counter(text).items()
            if normalizer is not None
            and (not char.isprintable() or not char.isascii())
            and not char.isspace()
            and not normalizer.normalize_str(char)
        )
        # One encoding, without special tokens; past the embedder's truncation the rest of
        # the text is in ``overflowing``, so every token is counted.
        encoding = self._encode(text)
        tokens = unknown = 0
        for part in (encoding, *encoding.overflowing):
            tokens += sum(part.attention_mask)
            unknown += part.ids.count(self._unknown_id)
        total = tokens + dropped
        share = (unknown + dropped) / total if total else 1.0
        if share > self._max_unknown_share:
            percent = max(1, round(share * 100))
            return (
                f"{percent}% of its tokens are unknown to the model"
                f" ({unknown + dropped} of {total})"
            )
        if tokens > self._max_tokens:
            return f"longer than the model reads: {tokens} tokens, it reads {self._max_tokens}"
        return None

    def _encode_here(self, text: str) -> Encoding:
        return self._tokenizer.encode(text, add_special_tokens=False)

    def _language(self, text: str) -> str | None:
        """Not English: more function words of other languages than of English, or, with
        neither, mostly words the model's English vocabulary does not hold."""
        words = [
            word
            for token in text.split()
            if not _ADDRESS.search(token)
            for word in (token.strip(_PUNCT),)
            if word and _LETTERS.fullmatch(word)
        ]
        english = 0
        foreign: list[str] = []
        accented = 0
        plain: list[str] = []
        skip = False
        for i, word in enumerate(words):
            low = word.lower()
            following = words[i + 1] if i + 1 < len(words) else None
            if skip:
                skip = False
                continue
            if low in _ENGLISH or _CONTRACTION.search(low):
                english += 1
                continue
            if low == "et" and following is not None and following.lower() == "al":
                skip = True  # "et al.", in English as in Latin
                continue
            if i > 0 and not word.islower():
                continue  # a name, or a German noun: says nothing either way
            if i > 0 or not word.isupper():
                plain.append(word)
            if low in _FOREIGN or (_ELISION.match(low) and word.islower()):
                foreign.append(low)
            elif (
                low in _PARTICLES
                and following is not None
                and following.islower()
                and following not in _PARTICLES
            ):
                foreign.append(low)
            elif word.islower() and not word.isascii():
                accented += 1  # "mañana", "réunion"; "café" in English too, so half
        if len(foreign) + accented / 2 > english:
            shown = ", ".join(dict.fromkeys(foreign[:4])) or "words with accents"
            return f"{ENGLISH_ONLY} (words of other languages: {shown})"
        if english or foreign or accented or len(plain) < 2:
            return None
        known = sum(1 for word in plain if self._known(word))
        if known * 2 < len(plain):
            return (
                f"{ENGLISH_ONLY} ({len(plain) - known} of its {len(plain)} words are not in"
                " the model's English vocabulary)"
            )
        return None

    def _known(self, word: str) -> bool:
        normalizer = self._normalizer
        folded = word.lower() if normalizer is None else normalizer.normalize_str(word)
        return all(part in self._vocab for part in _SPLIT.split(folded) if part)
