"""Fonts for the PDF: Bitstream Vera (TrueType, shipped inside the reportlab wheel, embedded as a
subset) for Latin text, Courier for code, and reportlab's CID fonts for Chinese, Japanese and
Korean (and the Greek, Cyrillic and symbols those fonts carry). CID fonts are not embedded: a PDF
reader draws them with its own Asian fonts, and the text stays extractable either way.

`Faces.markup` turns text into reportlab paragraph markup, escaped, with each run of characters
the paragraph's font lacks wrapped in the font that has them; what no font has becomes "?", so no
character can make a PDF fail.
"""

from __future__ import annotations

import threading
import unicodedata
from functools import lru_cache
from pathlib import Path
from xml.sax.saxutils import escape

import reportlab
from reportlab.lib.fonts import addMapping
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfbase.ttfonts import TTFont

SANS = "Vera"
SANS_BOLD = "Vera-Bold"
MONO = "Courier"
#: The CID font for each language that needs one; Chinese (simplified) serves every other language.
CID_FONTS = {"ja": "HeiseiMin-W3", "ko": "HYSMyeongJo-Medium", "zh": "STSong-Light"}
_VERA_FILES = {
    SANS: "Vera.ttf",
    SANS_BOLD: "VeraBd.ttf",
    "Vera-Italic": "VeraIt.ttf",
    "Vera-BoldItalic": "VeraBI.ttf",
}
#: Code points the CID fonts carry beyond the ideographs: Greek and Cyrillic, Hangul jamo,
#: punctuation, arrows, maths, box drawing and shapes, then CJK, Hangul and full-width forms.
_CID_RANGES = (
    (0x0370, 0x052F),
    (0x1100, 0x11FF),
    (0x2000, 0x27BF),
    (0x2E80, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
)
_KANA = ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F))
_HANGUL = ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7AF))
_REGISTERING = threading.Lock()


def register() -> frozenset[int]:
    """Registers the fonts once per process (the web app exports from several threads); returns
    the code points Vera has glyphs for."""
    with _REGISTERING:
        return _register()


@lru_cache(maxsize=1)
def _register() -> frozenset[int]:
    folder = Path(reportlab.__file__).parent / "fonts"
    vera = {name: TTFont(name, str(folder / file)) for name, file in _VERA_FILES.items()}
    for font in vera.values():
        pdfmetrics.registerFont(font)
    pdfmetrics.registerFontFamily(
        SANS, normal=SANS, bold=SANS_BOLD, italic="Vera-Italic", boldItalic="Vera-BoldItalic"
    )
    for face in CID_FONTS.values():
        pdfmetrics.registerFont(UnicodeCIDFont(face))
        for bold in (0, 1):  # <b> and <i> inside a CID run keep the same face (there is no bold)
            for italic in (0, 1):
                addMapping(face, bold, italic, face)
    return frozenset(code for code, glyph in vera[SANS].face.charToGlyph.items() if glyph)


def _within(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= code <= high for low, high in ranges)


def _in_cp1252(char: str) -> bool:
    try:
        char.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


class Faces:
    """Chooses, character by character, the font that can draw it."""

    def __init__(self, language: str) -> None:
        self.vera = register()
        self.default_cid = CID_FONTS.get(language.split("-")[0].lower(), CID_FONTS["zh"])

    def markup(self, text: str, *, mono: bool = False) -> str:
        """`text` as escaped markup for a paragraph in Vera (or Courier when `mono`)."""
        runs: list[tuple[str | None, list[str]]] = []
        for char in text:
            face, shown = self.face(char, mono)
            if runs and runs[-1][0] == face:
                runs[-1][1].append(shown)
            else:
                runs.append((face, [shown]))
        return "".join(self._wrap(face, "".join(chars)) for face, chars in runs)

    def face(self, char: str, mono: bool) -> tuple[str | None, str]:
        """(the font to switch to, or None for the paragraph's own; the character to draw)."""
        code = ord(char)
        if char in "\n\t" or (_in_cp1252(char) if mono else code in self.vera):
            return None, char
        category = unicodedata.category(char)
        if category == "Cf":  # zero-width and format characters: nothing to draw
            return None, ""
        if category == "Zs":
            return None, " "
        if mono and code in self.vera:
            return SANS, char
        if _within(code, _CID_RANGES):
            return "cid", char
        return None, "?"

    def _wrap(self, face: str | None, text: str) -> str:
        escaped = escape(text)
        if face is None or not text:
            return escaped
        if face == "cid":
            face = self.cid_for(text)
        return f'<font face="{face}">{escaped}</font>'

    def cid_for(self, text: str) -> str:
        codes = [ord(c) for c in text]
        if any(_within(c, _KANA) for c in codes):
            return CID_FONTS["ja"]
        if any(_within(c, _HANGUL) for c in codes):
            return CID_FONTS["ko"]
        return self.default_cid
