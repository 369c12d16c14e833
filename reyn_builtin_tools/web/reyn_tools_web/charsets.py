"""Which charsets ``web_fetch`` decodes a body with: an allowlist of text encodings.

A page names its charset (``Content-Type: text/html; charset=…`` or ``<meta charset=…>``), so the
name is attacker-chosen. Python's codec registry answers to far more than text encodings: some are
slow on hostile input (``punycode`` and ``idna`` are quadratic pure Python: 300 KB of ``punycode``
takes tens of seconds), some are not byte-to-text at all (``rot13``, ``uu``, ``zlib``, ``base64``,
``hex``), some rewrite the text (``unicode_escape``, ``utf-7`` — which browsers refuse because it
smuggles markup). So a label is looked up, mapped to Python's canonical codec name, and used only if
that name is in ``TEXT_CHARSETS`` — the encodings of the WHATWG Encoding Standard that Python
implements in C, plus UTF-32 and their close aliases. Anything else is decoded as UTF-8 (with
replacement characters) and a note says so. Pure standard library.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

#: Canonical Python codec names (``codecs.lookup(label).name``) that web_fetch decodes with. Every
#: one is a C codec whose decoding is linear in the input.
TEXT_CHARSETS: frozenset[str] = frozenset(
    {
        "utf-8",
        "utf-8-sig",
        "utf-16",
        "utf-16-le",
        "utf-16-be",
        "utf-32",
        "utf-32-le",
        "utf-32-be",
        "ascii",
        *(f"iso8859-{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16)),
        *(f"cp{n}" for n in (1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258)),
        "cp437",
        "cp850",
        "cp866",
        "cp874",
        "tis-620",
        "koi8-r",
        "koi8-u",
        "mac-roman",
        "mac-cyrillic",
        "shift_jis",
        "cp932",
        "euc_jp",
        "iso2022_jp",
        "gb2312",
        "gbk",
        "gb18030",
        "hz",
        "big5",
        "big5hkscs",
        "cp950",
        "euc_kr",
        "cp949",
        "iso2022_kr",
    }
)
MAX_LABEL = 40
DEFAULT = "utf-8"
_META_WINDOW = 4096
# Bounded repetitions only: on the 4 KB window this is linear in practice, never catastrophic.
_META_CHARSET = re.compile(rb"""<meta\b[^<>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,64})""", re.I)


@dataclass(frozen=True, slots=True)
class CharsetChoice:
    """The codec to decode with, and a note for the result when the page's own choice was not used."""

    codec: str
    note: str | None = None


def choose_charset(label: str | None, where: str = "Content-Type") -> CharsetChoice:
    """The codec for a declared charset ``label`` (``None``: not declared, UTF-8 without a note)."""
    if label is None:
        return CharsetChoice(DEFAULT)
    shown = label[:MAX_LABEL] + ("…" if len(label) > MAX_LABEL else "")
    fallback = "the body was decoded as UTF-8 with replacement characters"
    if len(label) > MAX_LABEL:
        return CharsetChoice(
            DEFAULT, f"the {where} charset {shown!r} is too long to be a charset; {fallback}"
        )
    try:
        name = codecs.lookup(label).name
    except (LookupError, ValueError, TypeError):
        return CharsetChoice(DEFAULT, f"the {where} charset {shown!r} is unknown; {fallback}")
    if name not in TEXT_CHARSETS:
        return CharsetChoice(
            DEFAULT,
            f"the {where} charset {shown!r} is not a text encoding web_fetch decodes "
            f"(allowed: the WHATWG Encoding Standard's encodings, e.g. utf-8, windows-1252, "
            f"iso-8859-*, shift_jis, gb18030, big5, euc-kr); {fallback}",
        )
    return CharsetChoice(name)


def sniff_meta_charset(body: bytes) -> str | None:
    """The charset an HTML document names in a ``<meta>`` tag within its first 4 KB, if any."""
    match = _META_CHARSET.search(body[:_META_WINDOW])
    return match.group(1).decode("ascii") if match else None


def decode_text(body: bytes, label: str | None, *, sniff_html: bool) -> tuple[str, CharsetChoice]:
    """The body as text and the charset choice: the declared ``label``, else (HTML only) a
    ``<meta>`` charset, else UTF-8; undecodable bytes become U+FFFD."""
    if label is not None:
        choice = choose_charset(label, "Content-Type")
    elif sniff_html and (meta := sniff_meta_charset(body)) is not None:
        choice = choose_charset(meta, "<meta>")
    else:
        choice = CharsetChoice(DEFAULT)
    return body.decode(choice.codec, errors="replace"), choice
