"""Final-answer parsing for one-word answers (Find the Origin). Never raises; linear in the output length.

``parse_final_answer`` returns the first *candidate word* found, looking in three tiers:

1. ``FINAL ANSWER`` markers (any case, markdown allowed between and around the two words), in text order.
   A marker offers a candidate when it is followed by a separator (``:``, ``-``, ``–``, ``—``, ``=``,
   ``is``, ``would be``, ``will be``) and text on the same line (``FINAL ANSWER: x``, ``The final answer
   is x.``), or, when nothing follows it on its line, by the next non-empty line, provided the marker is a
   label or a heading (it has a separator or starts its line: ``**Final Answer**`` then ``x`` below).
   A marker without a separator (``... in this final answer.``) offers nothing. A marker reads only up to
   the next marker; when its line runs into the next one, the candidate must end at a clause end (below)
   before it (``FINAL ANSWER: x (final answer)`` gives ``x``; ``FINAL ANSWER: the final answer is x`` gives
   nothing from its first marker and ``x`` from its second).
2. Only when no marker gives a candidate word: phrases ``origin is x``, ``origin word is x``, ``origin of
   "y" is x``, ``origin: x`` and the same with ``answer`` (``The answer is x.``, ``**Answer:** x``), in
   text order; the text between ``origin`` and the copula may only be ``word`` and an ``of ...`` phrase
   without punctuation, so ``To find the origin, I ...:`` is not an answer. ``answer`` may be a JSON key
   (``{"answer": "x"}``).
3. Only when neither gives one: an output that is nothing but one word (``**x**``, ``x.``).

The first marker or phrase with a candidate word wins: a later prose mention cannot override it, and a
model that writes ``FINAL ANSWER: x`` and later ``FINAL ANSWER: y`` is scored on ``x`` (the issue asks for
the first committed answer, not for the last revision).

The text offered by a marker or phrase becomes a candidate in these steps (``_candidate``):
  * whitespace collapsed, leading markdown, bullets and brackets stripped, ``\\boxed{x}`` unwrapped;
  * cut at the first clause end: ``.``/``!``/``?``/``;`` before a space or the end, an opening
    parenthesis or bracket, a spaced hyphen or an en/em dash, ``because``/``since``/``which``/``but``/
    ``given``/``meaning``, or a comma before ``as``/``so``/``with``/``being``
    (``x (it has no predecessor)``, ``x. This word starts the chain.`` -> ``x``);
  * a lead-in is dropped: ``x is the origin`` -> ``x``; else everything up to the last ``is``/``was``/
    ``be``/``are``/``:``/``=`` (``The origin is x``, ``I think it is x``); then fillers such as ``the
    word``, ``therefore``, ``thus``;
  * when exactly one distinct quoted span remains (``"x"``, ``'x'``, ```x```, curly quotes), it is taken;
    two different ones (``"x" or "y"``) are a hedge;
  * the result is normalized (``normalize_entity``) and is a candidate word only if it is one word
    (letters or digits, inner hyphens or apostrophes allowed). Hedges and refusals (``x or y``,
    ``probably x``, ``I cannot determine the origin``) are not words, so they give no candidate.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["normalize_entity", "parse_final_answer"]

_STRIP = " \t\r\n*_`\"'“”‘’«»[](){}<>.,;:!?$"
_MARKUP = " \t\r*_`#>-=~"

_FINAL = re.compile(r"final[\s*_`]*answer", re.IGNORECASE)
# Everything after this match is optional, so it never backtracks.
_AFTER_FINAL = re.compile(r"[ \t*_`\"']*(?P<sep>(?:is|would[ \t]+be|will[ \t]+be)\b|[:=]|[-–—]+)?[ \t*_`:=–—-]*",
                          re.IGNORECASE)
_ORIGIN = re.compile(r"\b(?:origin|answer)\b", re.IGNORECASE)
# Regexes below run on whitespace-collapsed text: single spaces keep them free of backtracking.
_COPULA = re.compile(r" (?:is|was|would be|must be|should be|will be)\b|[:=]", re.IGNORECASE)
_HEAD_MARKUP = dict.fromkeys(map(ord, "*_`\"'"), None)  # markdown and JSON quotes around "answer"
_ORIGIN_HEAD = re.compile(r"(?: word)?(?: of [^,;:.!?()]{1,150}?)?(?: word)?", re.IGNORECASE)
_BOXED = re.compile(r"\\(?:boxed|text|textbf|mathrm|mathbf)\{([^{}]{0,200})\}")
_CLAUSE_END = re.compile(
    r"[.!?;](?= |$)|[(\[]| -+ |[—–]| (?:because|since|which|but|given|meaning)\b|, (?:as|so|with|being)\b",
    re.IGNORECASE,
)
_SUBJECT_FIRST = re.compile(r" (?:is|was) (?:(?:the|my|its|our) )?(?:origin|answer|start|beginning|first word)\b",
                            re.IGNORECASE)
_LEAD_IN = re.compile(r"(?:^| )(?:is|was|be|are)(?= )|[:=]", re.IGNORECASE)
_FILLER = re.compile(
    r"(?:therefore|thus|hence|so|clearly|simply|just|then|indeed|actually|also|finally|definitely|(?:the )?"
    r"(?:origin )?word|(?:the )?origin)[,:]? ",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"(?<!\w)[\"“”'‘’`]([^\"“”'‘’`\n]{1,200})[\"“”'‘’`](?!\w)")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

_Offer = Callable[[str, re.Match[str], int], "str | None"]  # (text, marker match, limit) -> candidate


def normalize_entity(text: str) -> str:
    """Lower case, inner whitespace collapsed, markdown/quotes/trailing punctuation stripped."""
    return " ".join(text.strip(_STRIP).split()).lower().strip(_STRIP)


def parse_final_answer(output: object) -> str | None:
    """The first candidate word after a ``FINAL ANSWER`` marker, else an ``origin is`` phrase, else a bare word.

    See the module docstring for the exact rules. Accepts ``FINAL ANSWER: word``, ``**Final Answer:**
    "Word".``, ``final answer - word``, ``The final answer is word.``, ``FINAL ANSWER: The origin is
    word (no line links to it).`` and the like.
    """
    try:
        text = output if isinstance(output, str) else ("" if output is None else str(output))
        return (_first_candidate(text, _FINAL, _final_offer) or _first_candidate(text, _ORIGIN, _origin_offer)
                or _bare_word(text))
    except Exception:  # pragma: no cover - last resort; the parser is meant not to raise at all
        return None


def _bare_word(text: str) -> str | None:
    """An output that is nothing but one word (with markdown, quotes or a full stop) is that word."""
    word = normalize_entity(text)
    return word if word and _WORD.fullmatch(word) else None


def _first_candidate(text: str, marker: re.Pattern[str], offer: _Offer) -> str | None:
    """The candidate of the first marker match that offers one.

    Each match only reads up to the next match, so the total cost stays linear.
    """
    matches = list(marker.finditer(text))
    for i, match in enumerate(matches):
        limit = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        word = offer(text, match, limit)
        if word is not None:
            return word
    return None


def _final_offer(text: str, match: re.Match[str], limit: int) -> str | None:
    line_end = _line_end(text, match.end(), limit)
    after = _AFTER_FINAL.match(text, match.end(), line_end)
    rest = text[after.end() : line_end]
    if rest.strip(_MARKUP):
        if after.group("sep") is None:
            return None  # prose: "... in this final answer."
        return _candidate(rest, complete=not _runs_into(text, line_end, limit))
    if after.group("sep") is None and not _starts_line(text, match.start()):
        return None  # "... that is my final answer" at the end of a line is not a label
    return _candidate_on_next_line(text, line_end, limit)


def _origin_offer(text: str, match: re.Match[str], limit: int) -> str | None:
    line_end = _line_end(text, match.end(), limit)
    rest = text[match.end() : line_end]
    tail = ("" if rest[:1] not in " \t" else " ") + " ".join(rest.split())
    copula = _COPULA.search(tail, 0, 200)
    if copula is None:
        return None
    head = tail[: copula.start()].translate(_HEAD_MARKUP).rstrip()
    if _ORIGIN_HEAD.fullmatch(head) is None:
        return None  # "To find the origin, I trace back: ..." is not an answer
    return _candidate(tail[copula.end() :], complete=not _runs_into(text, line_end, limit))


def _line_end(text: str, start: int, limit: int) -> int:
    end = text.find("\n", start, limit)
    return limit if end < 0 else end


def _runs_into(text: str, line_end: int, limit: int) -> bool:
    """True when the line ends at the next marker rather than at a newline or the end of the text."""
    return line_end == limit < len(text)


def _starts_line(text: str, position: int) -> bool:
    """True when only markdown or a list number precedes ``position`` on its line."""
    while position > 0 and (text[position - 1] in " \t*_`#>-." or text[position - 1].isdigit()):
        position -= 1
    return position == 0 or text[position - 1] == "\n"


def _candidate_on_next_line(text: str, line_end: int, limit: int) -> str | None:
    position = line_end
    while position < limit:
        start = position + 1
        end = _line_end(text, start, limit)
        if text[start:end].strip(_MARKUP):
            return _candidate(text[start:end], complete=not _runs_into(text, end, limit))
        position = end
    return None


def _candidate(text: str, complete: bool = True) -> str | None:
    """The word a marker or phrase offers (module docstring), or None when it is not a single word.

    ``complete`` is False when ``text`` was cut at the next marker: the candidate must then end at a
    clause end before it ("FINAL ANSWER: the final answer is x" offers nothing, its second marker does).
    """
    clause = _BOXED.sub(r"\1", " ".join(text.split())).lstrip(" *_`([{<$-•")
    end = _CLAUSE_END.search(clause)
    if end is not None:
        clause = clause[: end.start()]
    elif not complete:
        return None
    clause = clause.strip()
    for option in _readings(clause):
        word = normalize_entity(_only_quoted(option))
        if word and _WORD.fullmatch(word):
            return word
    return None


def _only_quoted(text: str) -> str:
    """The quoted span when ``text`` quotes exactly one distinct span, else ``text`` itself."""
    spans = {match.group(1) for match in _QUOTED.finditer(text)}
    return spans.pop() if len(spans) == 1 else text


def _readings(clause: str) -> list[str]:
    """Texts that may hold the answer word, best first: the clause without its lead-in, then the clause's
    head before a colon or equals sign ("x: no line links to it")."""
    subject = _SUBJECT_FIRST.search(clause)
    if subject is not None and subject.start() > 0:
        return [clause[: subject.start()]]  # "x is the origin"
    leads = list(_LEAD_IN.finditer(clause))
    if not leads:
        return [_drop_fillers(clause)]
    readings = [_drop_fillers(clause[leads[-1].end() :].strip())]
    if leads[0].group() in ":=":
        readings.append(clause[: leads[0].start()])
    return readings


def _drop_fillers(clause: str) -> str:
    while True:  # a filler goes only while a word remains after it ("word" may itself be the gold)
        stripped = clause.lstrip(" *_`\"'“”‘’")
        filler = _FILLER.match(stripped)
        if filler is None or not stripped[filler.end() :].strip(_STRIP):
            return clause
        clause = stripped[filler.end() :]
