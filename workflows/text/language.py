"""Which language a question (or a source) is written in: a small rule, run inside the workflow.

Why a rule and not a statistical detector from PyPI: the workflow must decide the report's
language deterministically and without an activity round trip, and questions are short (a dozen
words), where character n-gram models are at their weakest anyway. Two signals decide:

1. The script. Hangul is Korean, kana is Japanese, Han alone is Chinese, and Greek, Hebrew,
   Thai, Georgian, Armenian and the Indic scripts each name their language; Cyrillic and Arabic
   are told apart by the letters only some of their languages use (Ukrainian і/ї/є, Persian
   پ/چ/ژ/گ).
2. For Latin script, the function words of each language (the most frequent words of any text:
   articles, pronouns, prepositions) plus letters only it uses (ß, đ/ơ/ư, ñ, ã/õ, å, ł, ğ/ş/ı).

A text with no decisive signal is English, the engines' default. `detect("Wie funktioniert
die Speicherverwaltung in Rust?")` is "de"; `detect("Rust 是如何管理内存的？")` is "zh".
"""

from __future__ import annotations

import re
import unicodedata

#: The languages this module names, with the English name a prompt uses ("Write in German.").
NAMES: dict[str, str] = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
    "fi": "Finnish",
    "pl": "Polish",
    "cs": "Czech",
    "tr": "Turkish",
    "vi": "Vietnamese",
    "id": "Indonesian",
    "ro": "Romanian",
    "hu": "Hungarian",
    "ru": "Russian",
    "uk": "Ukrainian",
    "bg": "Bulgarian",
    "el": "Greek",
    "he": "Hebrew",
    "ar": "Arabic",
    "fa": "Persian",
    "hi": "Hindi",
    "bn": "Bengali",
    "ta": "Tamil",
    "th": "Thai",
    "ka": "Georgian",
    "hy": "Armenian",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
}

#: Function words per Latin-script language: frequent in any text, rare as content.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the and of to is in that it for what how why which does do are with can be this was on"
        " an or from when should i you my by not",
        "de": "der die das und ist nicht ein eine wie was warum welche mit für von zu den dem des im"
        " auf sich ich es sind wird werden bei oder auch wenn kann",
        "fr": "le la les et est un une des du de que qui quoi comment pourquoi dans pour pas sur avec"
        " au aux ce cette sont il elle je nous vous quelle quel",
        "es": "el la los las y es un una que qué de del en por para con cómo como cuál por qué son"
        " se no lo al su sus está",
        "it": "il lo la gli le e è un una che di del della in per con come perché quale sono non si"
        " dei delle al alla",
        "pt": "o a os as e é um uma que de do da em para com como qual por não se são dos das no na"
        " ao seu sua",
        "nl": "de het een en is van dat die wat hoe waarom welke met voor op niet zijn in te ook"
        " er bij wordt worden",
        "sv": "och är att en ett det som vad hur varför vilken med för på inte av till den de har"
        " kan om",
        "da": "og er at en et det som hvad hvordan hvorfor hvilken med for på ikke af til den de har"
        " kan om",
        "no": "og er at en et det som hva hvordan hvorfor hvilken med for på ikke av til den de har"
        " kan om",
        "fi": "ja on ei se että mikä miten miksi kuinka onko mitä joka ovat tai myös kun",
        "pl": "i w z na jest nie się to jak co dlaczego który do od że są czy dla po przez",
        "cs": "a v je se na z že to jak co proč který do od jsou pro po není",
        "tr": "ve bir bu için ile mi mı mu mü ne nasıl neden hangi da de olan gibi çok daha",
        "vi": "và là của có không được những các một cho trong với như thế nào tại sao gì này để khi"
        " người",
        "id": "dan yang di ke dari ini itu dengan untuk adalah tidak apa bagaimana mengapa pada"
        " dalam akan",
        "ro": "și este în de la cu un o că nu pe ce cum care pentru sunt din",
        "hu": "és a az egy hogy nem van mi miért hogyan melyik ez azt meg is vagy",
    }.items()
}

#: Letters that only some Latin-script languages use: strong evidence, each worth two words.
LETTERS: dict[str, str] = {
    "de": "ßäöü",
    "fr": "çœèêëîïûù",
    "es": "ñ¿¡",
    "pt": "ãõ",
    "sv": "å",
    "da": "æø",
    "no": "æøå",
    "pl": "łąęśźżń",
    "cs": "řůěšč",
    "tr": "ğışİ",
    "vi": "đơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ",
    "ro": "ășțâ",
    "hu": "őű",
    "fi": "äö",
}

_WORD = re.compile(r"\w+", re.UNICODE)


def name(code: str) -> str:
    """The language's English name for a prompt ("German"); an unknown code as it was given."""
    return NAMES.get(code.split("-")[0].lower(), code)


def detect(text: str) -> str:
    """The text's language code, "en" when nothing decides otherwise."""
    by_script = _by_script(text)
    if by_script:
        return by_script
    words = [w.lower() for w in _WORD.findall(text)]
    scores = {lang: sum(1 for w in words if w in vocab) for lang, vocab in FUNCTION_WORDS.items()}
    lowered = text.lower()
    for lang, letters in LETTERS.items():
        scores[lang] = scores.get(lang, 0) + 2 * sum(lowered.count(ch) for ch in letters)
    best = max(scores.values(), default=0)
    if best == 0:
        return "en"
    # Ties go to the language listed first in NAMES (English first: the engines' default).
    return next(lang for lang in NAMES if scores.get(lang, 0) == best)


def _by_script(text: str) -> str | None:
    """The language a non-Latin script names, when letters of one make up a fair share."""
    counts: dict[str, int] = {}
    letters = 0
    for ch in text:
        if not ch.isalpha():
            continue
        letters += 1
        script = _script(ch)
        if script:
            counts[script] = counts.get(script, 0) + 1
    if not counts or letters == 0:
        return None
    if counts.get("hangul", 0):
        return "ko"
    if counts.get("kana", 0):
        return "ja"
    script, count = max(counts.items(), key=lambda kv: kv[1])
    if count * 4 < letters:  # a Latin text quoting a few foreign letters stays Latin
        return None
    if script == "cyrillic":
        if any(ch in text for ch in "іїєґІЇЄҐ"):
            return "uk"
        if any(ch in text for ch in "ъ") and not any(ch in text for ch in "ыэё"):
            return "bg"
        return "ru"
    if script == "arabic":
        return "fa" if any(ch in text for ch in "پچژگی") else "ar"
    return {
        "han": "zh",
        "greek": "el",
        "hebrew": "he",
        "thai": "th",
        "devanagari": "hi",
        "bengali": "bn",
        "tamil": "ta",
        "georgian": "ka",
        "armenian": "hy",
    }.get(script)


def _script(ch: str) -> str | None:
    code = ord(ch)
    if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "hangul"
    if 0x3040 <= code <= 0x30FF:
        return "kana"
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
        return "han"
    try:
        first = unicodedata.name(ch).split()[0].lower()
    except ValueError:
        return None
    known = {
        "cyrillic",
        "arabic",
        "greek",
        "hebrew",
        "thai",
        "devanagari",
        "bengali",
        "tamil",
        "georgian",
        "armenian",
    }
    return first if first in known else None


def choose(requested: str, question: str) -> str:
    """The report's language: the request's code, or the question's when it asks for "auto"."""
    return detect(question) if requested == "auto" else requested.split("-")[0].lower()


def sources_note(report_language: str, texts: list[str]) -> str | None:
    """A note for the reader when most sources are in another language than the report."""
    found = [detect(t[:400]) for t in texts if t.strip()]
    if not found:
        return None
    top = max(sorted(set(found)), key=found.count)
    if top == report_language or found.count(top) * 2 <= len(found):
        return None
    # Which language the report is in is the engine's to say: the offline engine cannot translate.
    return f"Most sources were in {name(top)}, not {name(report_language)}."
