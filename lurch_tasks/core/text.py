"""Text that came from outside (submission fields, model labels, file names, model outputs) made safe to print or
to write into a table: no control or format characters reach a terminal or a file, Markdown cells cannot open a
new cell or row, and CSV cells cannot start a spreadsheet formula."""

from __future__ import annotations

import unicodedata

# Cc: C0/C1 controls (ESC starts ANSI sequences); Cf: format characters (bidi overrides reorder what is shown);
# Zl/Zp: line and paragraph separators; Cs/Co/Cn: surrogates, private use, unassigned.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n", "|", "%")
_MARKDOWN_SPECIAL = frozenset("\\`*_{}[]<>()#+-!|~")


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def printable(text: object, keep_newlines: bool = False) -> str:
    """``text`` with every control, format or separator character shown as an escape (``\\x1b``), so it prints as
    one inert line (or lines, with ``keep_newlines``)."""
    text = str(text)
    if text.isprintable():  # the common case, fast
        return text
    return "".join(char if (keep_newlines and char == "\n") or unicodedata.category(char) not in _UNSAFE_CATEGORIES
                   else _escaped(char) for char in text)


def markdown_cell(text: object) -> str:
    """One Markdown table cell showing ``text`` literally: printable, and every Markdown punctuation mark
    backslash-escaped (a ``|`` cannot end the cell, ``<`` cannot open HTML, ``[`` cannot make a link)."""
    return "".join(f"\\{char}" if char in _MARKDOWN_SPECIAL else char for char in printable(text))


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text: strings starting with a formula prefix get a leading ``'``
    (numbers are left alone), and control characters are escaped."""
    if not isinstance(value, str):
        return value
    value = printable(value)
    return f"'{value}" if value.startswith(_FORMULA_PREFIXES) else value
