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
  * chat-template tokens (``</s>``, ``<|im_end|>``) are removed from the whole output first;
  * whitespace collapsed, leading markdown, bullets and brackets stripped, ``\\boxed{x}`` unwrapped (also
    nested: ``\\boxed{\\text{x}}``);
  * cut at the first clause end: ``.``/``!``/``?``/``;`` before a space or the end, an opening
    parenthesis or bracket, a spaced hyphen or an en/em dash, ``because``/``since``/``which``/``but``/
    ``given``/``meaning``, a comma before ``as``/``so``/``with``/``being``, or ``and`` starting a new
    clause with its own ``is``/``was`` (``x (it has no predecessor)``, ``x. This word starts the chain.``,
    ``"x" and "z" is linked to "w"`` -> ``x``), but not ``"x" and "y" is the answer`` (two words offered);
  * a lead-in is dropped: ``x is the origin`` -> ``x``; else everything up to the last ``is``/``was``/
    ``be``/``are``/``:``/``=`` outside double quotes (``The origin is x``, ``I think it is x``; in ``"x"
    in the sentence "y is z"`` nothing is a lead-in); then fillers such as ``the word``, ``therefore``;
    without a lead-in, an appositive ends the answer (``x, the origin of y`` -> ``x``);
  * ``y comes from x`` / ``y traces back to x`` (also ``originates from``, ``is derived from``, ``leads
    back to``, ...) gives ``x`` when the subject ``y`` is the question's destination or ``it``/``this``;
  * when exactly one distinct quoted span remains (``"x"``, ``'x'``, ```x```, curly quotes), it is taken;
    two different ones (``"x" or "y"``) are a hedge, except that a quoted destination after ``of``/``for``
    is not counted when nothing hedges or negates (``"x", the origin of "y"``; never ``"y" or "x"``);
  * with a known destination, a chain of words joined by arrows gives its end that is not the
    destination (``x -> z -> y`` and ``y <- z <- x`` give ``x``; a chain not ending at ``y`` gives nothing);
  * the result is normalized (``normalize_entity``) and is a candidate word only if it is one word
    (letters or digits, inner hyphens or apostrophes allowed). Hedges and refusals (``x or y``,
    ``probably x``, ``I cannot determine the origin``) are not words, so they give no candidate.

The destination (the question's word) is optional and only ever removes a restatement of itself; an
answer naming the destination is still that answer (``FINAL ANSWER: y`` gives ``y``, which is wrong).

Bounds, so any output scores in milliseconds (none binds on a real answer, which is a few hundred tokens):
  * a very long output is read as its head and tail windows (``bounds.bounded_output``: 64k characters and
    1,000 lines each);
  * a marker or phrase whose text (up to the next one) holds no letter or digit offers nothing, so it is
    skipped without being read; of the others, only the first and the last ``_MAX_OFFERS`` of each tier are
    read (a model looping on ``FINAL ANSWER: maybe x`` is not read a thousand times);
  * a candidate clause is read from at most ``_MAX_CLAUSE_WORDS`` words and ``_MAX_CLAUSE_CHARS`` characters;
    a clause cut there must end at a clause end before the cut, as if it ran into the next marker.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .bounds import bounded_output

__all__ = ["normalize_entity", "parse_final_answer"]

_STRIP = " \t\r\n*_`\"'“”‘’«»[](){}<>.,;:!?$"
_MARKUP = " \t\r*_`#>-=~"

_FINAL_TEXT = r"final[\s*_`]*answer"
_FINAL = re.compile(_FINAL_TEXT, re.IGNORECASE)
# Everything after this match is optional, so it never backtracks.
_AFTER_FINAL = re.compile(r"[ \t*_`\"']*(?P<sep>(?:is|would[ \t]+be|will[ \t]+be)\b|[:=]|[-–—]+)?[ \t*_`:=–—-]*",
                          re.IGNORECASE)
_ORIGIN_TEXT = r"\b(?:origin|answer)\b"
_ORIGIN = re.compile(_ORIGIN_TEXT, re.IGNORECASE)


def _live(marker: str) -> re.Pattern[str]:
    """``marker`` followed by a letter or digit before the next ``marker``: only such a marker can offer a word
    (every candidate is a word of the text it reads). The possessive run keeps the lookahead linear, and a
    run of empty markers (``FINAL ANSWER: FINAL ANSWER: ...``) is skipped inside the regex engine."""
    return re.compile(rf"{marker}(?=[\W_]*+(?!{marker})[^\W_])", re.IGNORECASE)


_FINAL_LIVE = _live(_FINAL_TEXT)
_ORIGIN_LIVE = _live(_ORIGIN_TEXT)
_MAX_OFFERS = 32  # markers read per tier from each end; a real answer has a handful
_MAX_CLAUSE_WORDS = 400  # a candidate clause is read from this many words at most ...
_MAX_CLAUSE_CHARS = 4_000  # ... and this many characters
_NOT_BLANK = re.compile(r"[^ \t\r*_`#>\-=~\n]")  # a character that _MARKUP does not strip
_LINE_PREFIX = " \t*_`#>-.0123456789"  # markdown or a list number before a heading (``_starts_line``)
_LINE_PREFIX_MARKUP = dict.fromkeys(map(ord, " \t*_`#>-."), None)
# Regexes below run on whitespace-collapsed text: single spaces keep them free of backtracking.
_COPULA = re.compile(r" (?:is|was|would be|must be|should be|will be)\b|[:=]", re.IGNORECASE)
_HEAD_MARKUP = dict.fromkeys(map(ord, "*_`\"'"), None)  # markdown and JSON quotes around "answer"
_ORIGIN_HEAD = re.compile(r"(?: word)?(?: of [^,;:.!?()]{1,150}?)?(?: word)?", re.IGNORECASE)
_BOXED = re.compile(r"\\(?:boxed|text|textbf|mathrm|mathbf)\{([^{}]{0,200})\}")
_CLAUSE_END = re.compile(
    r"[.!?;](?= |$)|[(\[]| -+ |[—–]| (?:because|since|which|but|given|meaning)\b|, (?:as|so|with|being)\b"
    # a new clause after "and" ("x and "y" is linked to "z""), unless it names the answer ("x and y is the origin")
    r"|,? and (?:[^ ]+ ){1,4}?(?:is|was) "
    r"(?!(?:(?:the|my|its|our|a)\b ?)?(?:(?:origin|answer|start|beginning|first word)\b|$))",
    re.IGNORECASE,
)
# "x, the origin of "y"": an appositive naming the answer, read only when the clause has no lead-in
_APPOSITIVE = re.compile(r", (?:(?:which|that) is |being )?(?:the|its|my|our) (?:origin|answer|first word)\b",
                         re.IGNORECASE)
# "y comes from x", "it traces back to x": the answer follows, when the subject is the destination or "it"
_FROM = re.compile(
    r" (?:(?:comes|came|originates|originated|derives|derived|stems|stemmed|descends|descended|starts|started"
    r"|begins|began) from|(?:is|was) derived from|(?:traces|traced|leads|led|goes|went) back to"
    r"|(?:can|could) be traced back to|(?:is|was) traced back to) ",
    re.IGNORECASE,
)
_FROM_SUBJECTS = frozenset({"it", "this", "that", "the chain", "this chain", "the word", "this word"})
# hedges and negations: with one of them a destination quoted next to another word is not discarded
_HEDGE = re.compile(r"\b(?:or|and|either|maybe|perhaps|possibly|probably|might|could|not|no|never|unsure|nor)\b"
                    r"|n[’']t\b|/", re.IGNORECASE)
_OF_BEFORE = re.compile(r"\b(?:of|for)[ *_]*$", re.IGNORECASE)
# "x -> z -> y", "y <- z <- x": a chain written as the answer; with the destination y at one end, x is the other
# (a hyphen run is tried from its first hyphen only: from every hyphen it was quadratic on "-" * n)
_ARROW = re.compile(r" ?(?:(?<!-)-++>|<-+|=>|<=|[→←⟶⟵⇒⇐]) ?")
# chat-template tokens a model may leave in its text ("unwrapping.</s>", "<|im_end|>")
_SPECIAL = re.compile(r"<\|[^|<>\n]{1,40}\|>|</?s>")
_SUBJECT_FIRST = re.compile(r" (?:is|was) (?:(?:the|my|its|our) )?(?:origin|answer|start|beginning|first word)\b",
                            re.IGNORECASE)
_LEAD_IN = re.compile(r"(?:^| )(?:is|was|be|are)(?= )|[:=]", re.IGNORECASE)
_FILLER = re.compile(
    r"(?:therefore|thus|hence|so|clearly|simply|just|then|indeed|actually|also|finally|definitely|(?:the )?"
    r"(?:origin )?word|(?:the )?origin)[,:]? ",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"(?<!\w)[\"“”'‘’`]([^\"“”'‘’`\n]{1,200})[\"“”'‘’`](?!\w)")
_DOUBLE_QUOTED = re.compile(r'(["“”])([^"“”]*)(["“”]|$)')
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

_Offer = Callable[[str, re.Match[str], int, str], "str | None"]  # (text, match, limit, destination) -> word


def normalize_entity(text: str) -> str:
    """Lower case, inner whitespace collapsed, markdown/quotes/trailing punctuation stripped."""
    return " ".join(text.strip(_STRIP).split()).lower().strip(_STRIP)


def parse_final_answer(output: object, destination: object = None) -> str | None:
    """The first candidate word after a ``FINAL ANSWER`` marker, else an ``origin is`` phrase, else a bare word.

    See the module docstring for the exact rules. Accepts ``FINAL ANSWER: word``, ``**Final Answer:**
    "Word".``, ``final answer - word``, ``The final answer is word.``, ``FINAL ANSWER: The origin is
    word (no line links to it).`` and the like. ``destination`` is the word the question asks about
    (``What is the origin of "y"?``), when known: it lets ``"x", the origin of "y"`` and ``"y" comes from
    "x"`` give ``x``; it is never needed to read an answer that does not restate it.
    """
    try:
        text = output if isinstance(output, str) else ("" if output is None else str(output))
        text = _SPECIAL.sub(" ", bounded_output(text))
        dest = normalize_entity(destination) if isinstance(destination, str) else ""
        return (_first_candidate(text, _FINAL, _FINAL_LIVE, _final_offer, dest)
                or _first_candidate(text, _ORIGIN, _ORIGIN_LIVE, _origin_offer, dest) or _bare_word(text))
    except Exception:  # pragma: no cover - last resort; the parser is meant not to raise at all
        return None


def _bare_word(text: str) -> str | None:
    """An output that is nothing but one word (with markdown, quotes or a full stop) is that word."""
    if len(text.strip(_STRIP).split(None, 1)) > 1:
        return None  # two words or more (checked without collapsing a long output)
    word = normalize_entity(text)
    return word if word and _WORD.fullmatch(word) else None


def _first_candidate(text: str, marker: re.Pattern[str], live: re.Pattern[str], offer: _Offer,
                     destination: str) -> str | None:
    """The candidate of the first marker match that offers one.

    Only ``live`` matches (with a letter or digit before the next marker) are read, at most the first and the
    last ``_MAX_OFFERS``. Each match only reads up to the next match, so the total cost stays linear.
    """
    matches = list(live.finditer(text))
    if len(matches) > 2 * _MAX_OFFERS:
        matches = matches[:_MAX_OFFERS] + matches[-_MAX_OFFERS:]
    for match in matches:
        following = marker.search(text, match.end())
        limit = following.start() if following is not None else len(text)
        word = offer(text, match, limit, destination)
        if word is not None:
            return word
    return None


def _final_offer(text: str, match: re.Match[str], limit: int, destination: str) -> str | None:
    line_end = _line_end(text, match.end(), limit)
    after = _AFTER_FINAL.match(text, match.end(), line_end)
    rest = text[after.end() : line_end]
    if rest.strip(_MARKUP):
        if after.group("sep") is None:
            return None  # prose: "... in this final answer."
        return _candidate(rest, not _runs_into(text, line_end, limit), destination)
    if after.group("sep") is None and not _starts_line(text, match.start()):
        return None  # "... that is my final answer" at the end of a line is not a label
    return _candidate_on_next_line(text, line_end, limit, destination)


def _origin_offer(text: str, match: re.Match[str], limit: int, destination: str) -> str | None:
    line_end = _line_end(text, match.end(), limit)
    rest = text[match.end() : line_end]
    words = rest.split(None, _MAX_CLAUSE_WORDS + 1)  # the copula is within 200 characters, the clause bounded
    tail = ("" if rest[:1] not in " \t" else " ") + " ".join(words)
    copula = _COPULA.search(tail, 0, 200)
    if copula is None:
        return None
    head = tail[: copula.start()].translate(_HEAD_MARKUP).rstrip()
    if _ORIGIN_HEAD.fullmatch(head) is None:
        return None  # "To find the origin, I trace back: ..." is not an answer
    return _candidate(tail[copula.end() :], not _runs_into(text, line_end, limit), destination)


def _line_end(text: str, start: int, limit: int) -> int:
    end = text.find("\n", start, limit)
    return limit if end < 0 else end


def _runs_into(text: str, line_end: int, limit: int) -> bool:
    """True when the line ends at the next marker rather than at a newline or the end of the text."""
    return line_end == limit < len(text)


def _starts_line(text: str, position: int) -> bool:
    """True when only markdown or a list number precedes ``position`` on its line."""
    prefix = text[text.rfind("\n", 0, position) + 1 : position]
    if not prefix.strip(_LINE_PREFIX):
        return True
    digits = prefix.translate(_LINE_PREFIX_MARKUP)  # other digits ("²", "١") count as list numbers too
    return digits.isdigit()


def _candidate_on_next_line(text: str, line_end: int, limit: int, destination: str) -> str | None:
    """The candidate of the first line after ``line_end`` that holds more than markdown (found in one search,
    however many blank lines come first)."""
    if line_end >= limit:
        return None
    found = _NOT_BLANK.search(text, line_end + 1, limit)
    if found is None:
        return None
    start = text.rfind("\n", line_end, found.start()) + 1
    end = _line_end(text, start, limit)
    return _candidate(text[start:end], not _runs_into(text, end, limit), destination)


def _candidate(text: str, complete: bool = True, destination: str = "") -> str | None:
    """The word a marker or phrase offers (module docstring), or None when it is not a single word.

    ``complete`` is False when ``text`` was cut at the next marker: the candidate must then end at a
    clause end before it ("FINAL ANSWER: the final answer is x" offers nothing, its second marker does).
    """
    words = text.split(None, _MAX_CLAUSE_WORDS)
    if len(words) > _MAX_CLAUSE_WORDS:
        words, complete = words[:_MAX_CLAUSE_WORDS], False
    clause = " ".join(words)
    if len(clause) > _MAX_CLAUSE_CHARS:
        clause, complete = clause[:_MAX_CLAUSE_CHARS], False
    for _ in range(3):  # \boxed{\text{x}}
        clause = _BOXED.sub(r"\1", clause)
    clause = clause.lstrip(" *_`([{<$-•")
    end = _CLAUSE_END.search(clause)
    if end is not None:
        clause = clause[: end.start()]
    elif not complete:
        return None
    clause = clause.strip()
    if destination and _ARROW.search(clause):
        return _chain_origin(clause, destination)
    for option in _readings(clause, destination):
        word = normalize_entity(_only_quoted(option, destination))
        if word and _WORD.fullmatch(word):
            return word
    return None


def _chain_origin(clause: str, destination: str) -> str | None:
    """The far end of a chain of words whose one end is the destination ("x -> z -> y" gives x)."""
    words = [normalize_entity(_only_quoted(part)) for part in _ARROW.split(clause)]
    if len(words) < 2 or not all(word and _WORD.fullmatch(word) for word in words):
        return None
    if words[-1] == destination != words[0]:
        return words[0]
    if words[0] == destination != words[-1]:
        return words[-1]
    return None


def _only_quoted(text: str, destination: str = "") -> str:
    """The quoted span when ``text`` quotes exactly one distinct span, else ``text`` itself.

    A quoted destination after ``of`` or ``for`` (``"x", the origin of "y"``) does not count as a second
    span, unless the text hedges or negates (``"x" or "y"``, ``not "x" but ...``)."""
    matches = list(_QUOTED.finditer(text))
    spans = {match.group(1) for match in matches}
    if destination and len(spans) == 2 and not _HEDGE.search(text):
        restated = {m.group(1) for m in matches if normalize_entity(m.group(1)) == destination}
        if len(restated) == 1 and all(_OF_BEFORE.search(text, 0, m.start()) for m in matches
                                      if m.group(1) in restated):
            spans -= restated
    return spans.pop() if len(spans) == 1 else text


def _readings(clause: str, destination: str = "") -> list[str]:
    """Texts that may hold the answer word, best first: the clause without its lead-in, then the clause's
    head before a colon or equals sign ("x: no line links to it")."""
    source = _FROM.search(clause)
    if source is not None:  # "y comes from x", "it traces back to x"
        subject = normalize_entity(_only_quoted(_drop_fillers(clause[: source.start()])))
        if subject in _FROM_SUBJECTS or destination and subject == destination:
            clause = clause[source.end() :]
    subject = _SUBJECT_FIRST.search(clause)
    if subject is not None and subject.start() > 0:
        return [clause[: subject.start()]]  # "x is the origin"
    leads = list(_LEAD_IN.finditer(_mask_quoted(clause)))  # "x" in the sentence "y is z": not a lead-in
    if not leads:
        appositive = _APPOSITIVE.search(clause)
        if appositive is not None and appositive.start() > 0:
            return [clause[: appositive.start()]]  # "x, the origin of y"
        return [_drop_fillers(clause)]
    readings = [_drop_fillers(clause[leads[-1].end() :].strip())]
    if leads[0].group() in ":=":
        readings.append(clause[: leads[0].start()])
    return readings


def _mask_quoted(text: str) -> str:
    """``text`` with the insides of double-quoted spans (an unclosed one runs to the end) blanked out."""
    return _DOUBLE_QUOTED.sub(lambda m: m.group(1) + "_" * len(m.group(2)) + m.group(3), text)


def _drop_fillers(clause: str) -> str:
    while True:  # a filler goes only while a word remains after it ("word" may itself be the gold)
        stripped = clause.lstrip(" *_`\"'“”‘’")
        filler = _FILLER.match(stripped)
        if filler is None or not stripped[filler.end() :].strip(_STRIP):
            return clause
        clause = stripped[filler.end() :]
