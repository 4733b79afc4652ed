"""Edge parsing for graph-reconstruction answers (DESIGN 4.2 and 5).

A gold answer is a set of undirected edges between people named in the prompt. Every edge becomes one
atomic item, ``edge_item(a, b)``; predictions are parsed into items with ``parse_edges`` and scored with
``score_items``. The parser never raises and its cost is linear in the output length.

Name normalization (``normalize_name``), one rule for everything:
  case-folded; apostrophes deleted (``O'Neill``, ``O’Neill`` and ``oneill`` are equal); every other
  character that is not a letter or digit (hyphens, dots, markdown, quotes, brackets) becomes a space
  (``Adeyemi-Kovac`` equals ``Adeyemi Kovac``); whitespace collapsed; leading honorifics (``TITLES``)
  dropped, though never the last word.

Line syntax accepted by ``parse_edges`` (one connection per line):
  * strong separators: ``--`` (any run of two or more hyphens), ``—``, ``–``, arrows (``->``, ``<->``,
    ``<-->``, ``=>``, ``→``, ...); weak separators: ``,``, ``;``, ``&``, `` and ``, and `` - `` (a single
    hyphen with a space on both sides; a hyphen inside a word is part of a name);
  * list bullets and numbering, markdown, quotes and trailing punctuation are ignored; a parenthesized
    remark is dropped (unless its content is exactly a roster name) and so is anything after a colon
    (``A -- B: same flight``); a label before a colon is skipped (``Pair 1: A -- B``);
  * a line with a strong separator is split on strong separators only (``A -- B, both pilots`` has the
    parts ``A`` and ``B, both pilots``); with ``groups=True`` a part that is not exactly one roster name
    is split further on weak separators (``A -- B, C`` lists three names); a line without strong
    separators is split on all weak ones;
  * tuples: a line starting with a bracket is read group by group (``(A, B)``, ``[('A', 'B'), ('C', 'D')]``);
  * several strong pairs separated by commas or semicolons are read one by one (``A -- B; C -- D``),
    unless every part between the strong separators is exactly a roster name (``Morrow, Lena -- Baker, Tom``);
  * star lists: ``A: B, C`` (every listed part a roster name or a name-like phrase of 2-4 words) gives
    A-B and A-C; a line ``A:`` followed by bulleted lines that each name one person gives the same;
  * sentences, on lines without strong separators: a relation phrase (``is connected to``, ``is linked
    with``, ``shares a phone with``, ``has a direct connection with``, ...) pairs every person listed before
    it with every person listed after it (``A is connected to B and C`` gives A-B and A-C); a list ending
    in a group predicate (``are connected``, ``are all linked``, ``share``) is a group, expanded to all its
    pairs even without ``groups`` (``A, B and C are connected`` gives three pairs). Each side must be a list
    of roster names or 2-4 word names once leading (``So, A``) or trailing (``B through a plate``: the
    part still resolves) non-names are dropped;
  * markdown table rows: the first two non-numeric cells, if both resolve to roster names;
  * JSON anywhere in the output (bare or fenced), see ``parse_edges``.

How a line's parts (the texts between separators) become items:
  * a part *resolves* to a roster name when its normalized text equals one (also ``Last, First``), or is
    exactly the surname of exactly one roster person (``Morrow``, ``Ms. Morrow``; the surname is all words
    after the given name, or the last word), or else when it contains exactly one roster name as a
    whole-word substring (``Dr. Lena Morrow (pilot)``); given names alone never resolve;
  * a part that is exactly a surname two or more roster people share (or that is also someone's given
    name) is *ambiguous*: it counts as a name but resolves to nobody, so its pairs are false positives
    (``Calloway -- Cho`` with Oskar and Soren Calloway), never dropped and never guessed;
  * an unresolved part is *name-like* when it is 1-4 words that start with a capital letter (lower-case
    particles such as ``van``/``de`` allowed, common function words like ``the``/``however`` not);
    unresolved parts turn into items from their normalized text, so they count as false positives;
  * trailing (then leading) parts that neither resolve nor look like names are dropped while more than
    two parts remain (``A and B, both pilots``);
  * two parts with a strong separator: emitted unless both are junk (neither resolved nor name-like);
    two parts with only weak separators: emitted only if both resolve or look like names of 2-4 words
    (``However, Tom Baker ...`` is prose, not a pair);
  * three or more parts, all resolved or name-like: with ``groups=True`` every pair among them (at most
    ``MAX_GROUP`` names, larger lists are ignored); with ``groups=False`` consecutive pairs when the line
    uses strong separators (``A -- B -- C`` gives A-B and B-C) and nothing at all for a comma/``and``
    list (``A, B and C`` is ambiguous without groups);
  * a self pair (both parts the same person) is emitted as ``edge_item(a, a)``, never a gold item, when it
    is written as one explicit pair (``A -- A``, a table row, a JSON pair); a person named twice in prose,
    a list, a star (``A: A``) or a sentence gives no pair.

Which part of the output is the answer (``CONNECTIONS:`` markers):
  a *marker* is a line that starts, after markdown (``#``, ``>``, ``*``, ``_``, backticks), with
  ``connections`` or ``final connections`` followed by a colon or the end of the line, in any case, or an
  upper-case ``CONNECTIONS:`` anywhere. Each marker's *block* is the text from the marker to the next one.
  1. The answer is the block of the last marker whose block gives at least one pair: reasoning before it,
     and a draft list under an earlier marker, are not scored.
  2. When no block gives a pair, the answer is empty if some marker is the upper-case ``CONNECTIONS:`` the
     prompt asks for, or its block's first line is an explicit empty answer (``none``, ``n/a``, ``no
     connections``, ...): ``reasoning about A -- B`` then ``CONNECTIONS: none`` predicts nothing.
  3. Otherwise the markers are prose (a list followed by ``Connections: that is all``) and the whole
     output is read as if it had none.

Negated pairs are not predictions:
  * a line holding a negation cue gives no pairs. Cues (case-insensitive, whole words, on the line with
    whitespace collapsed): ``no``/``without`` [``direct``, ``clear``, ``real``, ...] ``connection(s)``/
    ``link(s)``/``relationship``/``relation``/``match(es)``; ``not`` [``directly``, ``actually``,
    ``really``, ``truly``] ``connected``/``linked``/``related``/``matched``/``a match``/``a [real|valid|
    genuine|true] connection``/``link``/``pair``; ``isn't``, ``aren't``, ``wasn't``, ``weren't``, ``don't``,
    ``doesn't``, ``didn't`` [...] ``connected``/``linked``/``related``/``share``/``count``; ``do``/``does``/
    ``did not share``/``count``; ``unrelated``, ``unconnected``, ``unlinked``; ``near miss(es)``/``near-miss``;
    ``share(s)``/``shared``/``has``/``have``/``had`` ``no``/``nothing``.
    A cue made only of words of roster names does not count; ``no`` inside a word (``Nolan``) never does.
    So ``No connection: A -- B``, ``A -- B (not connected)``, ``A -- B: not linked``, ``A and B are
    unrelated`` and ``A -- B — no link`` give nothing (the whole line is dropped, with any other pair on it);
  * a negated line that is a heading (markdown ``#`` or ending with a colon: ``**Not connected:**``,
    ``### Near misses``) also drops the lines and JSON below it, up to a blank line that follows them or
    the next heading without a cue;
  * table rows with a later cell ``no``, ``false``, ``✗``, ``✘``, ``❌``, ``none``, ``not connected``, ...
    and JSON objects with ``"connected": false`` (also ``linked``, ``related``, ``match``, ...) or a remark
    (``reason``, ``note``, ...) holding a cue give nothing.

Bounds, so any output scores in milliseconds (none binds on a real answer, which is a few hundred tokens):
  * a very long output is read as its head and tail windows (``bounds.bounded_output``: 64k characters and
    1,000 lines each);
  * a marker block without a letter or digit is not parsed (it cannot name anybody), and at most the last
    ``_MAX_BLOCKS`` other blocks are tried before the marker rule falls back to rules 2 and 3;
  * at most ``_MAX_JSON_ATTEMPTS`` JSON decode attempts per parsed text;
  * a line longer than ``_MAX_LINE_CHARS`` is read as the pieces between its bracketed groups (when it starts
    with a bracket), else its semicolons, else its commas, each piece as a line of its own (negation cues
    included), a piece still too long being cut;
  * a parsed text spends at most ``_MAX_WORK`` units (separators split, JSON values walked); once they are
    spent, the remaining lines other than plain ``A -- B`` lines are skipped;
  * a line read once with nothing pending (no ``Name:`` header, no negated section) and leaving nothing
    pending is not read again: repeating it cannot change the items.
Two fast paths give exactly what the rules above give, only sooner: a line ``A -- B`` and a JSON pair
``["A", "B"]`` whose two sides are roster names as the roster writes them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

from .bounds import bounded_output
from .names import TITLES, _item, edge_item, normalize_name

__all__ = ["MAX_GROUP", "TITLES", "edge_item", "normalize_name", "parse_edges"]

MAX_GROUP = 16
"""Largest group expanded to all its pairs with ``groups=True``; a longer list is ignored."""

_MAX_JSON_ATTEMPTS = 64  # JSON decode attempts per output: bounds the cost of failing attempts
_MAX_BLOCKS = 32  # marker blocks parsed, from the last one (a real answer has one or two markers)
_MAX_LINE_CHARS = 4_096  # a longer line is read as pieces (``_pieces``)
_MAX_WORK = 8_192  # separators split and JSON values walked per parsed text; a real answer needs a few hundred
_MAX_JSON_DEPTH = 8  # nesting levels walked inside a decoded JSON value
_MAX_NAME_CHARS = 200  # longer parts are never name-like
_MAX_NGRAM = 5  # roster names longer than this many words only match exactly

_POSSESSIVE = re.compile(r"['’]s\b", re.IGNORECASE)
_NON_NAME_CHARS = re.compile(r"[^\w'’.\-]+|_+")
_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "da", "di", "du", "la", "le", "bin", "ibn", "al", "el",
     "dos", "das", "do", "ter", "ten", "y", "st"}
)  # fmt: skip
_NOT_NAMES = frozenset(
    {
        "a", "an", "the", "this", "that", "these", "those", "and", "or", "but", "so", "if", "then", "also",
        "however", "therefore", "thus", "here", "there", "note", "none", "nobody", "no", "yes", "not", "i",
        "we", "you", "he", "she", "it", "they", "his", "her", "its", "their", "our", "my", "is", "are", "was",
        "were", "has", "have", "had", "with", "of", "in", "on", "at", "to", "for", "by", "from", "as",
        "connection", "connections", "connected", "pair", "pairs", "person", "people", "name", "names",
        "answer", "group", "groups", "clique", "cliques", "edge", "edges", "link", "links", "linked",
        "first", "second", "finally", "both", "all", "each", "same", "shared", "unknown", "n/a",
    }
)  # fmt: skip

# Separators: `-+>?`, `<-+>?` (greedy), `<=>`, `=>`, dashes and arrows, `,`, `;`, `&` and " and " in any case.
# Greedy runs always match once started, so a finditer over a line is linear even on long runs of hyphens. The
# pattern starts with one character class (the lookbehinds pick the branch), which lets the regex engine skip
# to candidate characters instead of trying every branch at every position (several times faster).
_SEP = re.compile(r"[-<=—–―‒↔⟷⇔→⟶⇒←⟵⇐,;& ](?:(?<=-)-*>?|(?<=<)(?:-+>?|=>)|(?<==)>|(?<=[—–―‒↔⟷⇔→⟶⇒←⟵⇐,;&])"
                  r"|(?<= )[aA][nN][dD] )")
_STRONG, _LIST, _WEAK = 2, 1, 0  # _LIST: comma or semicolon, also chunk boundaries between strong pairs

_NONE_ANSWERS = frozenset(
    {"none", "nothing", "n/a", "na", "nil", "no connections", "no connection", "none found", "no connections found",
     "no connections were found", "there are no connections", "no pairs", "no connected pairs", "[]", "{}", "-"}
)  # fmt: skip
_NONE_STRIP = " *_`\"'.!:()"
# Negation cues, matched case-insensitively on whitespace-collapsed lines (single spaces: no backtracking).
_NEGATION = re.compile(
    r"\b(?:no|without) (?:(?:direct|clear|real|actual|known|confirmed|valid|apparent|obvious|genuine) )?"
    r"(?:connection|connections|link|links|relationship|relation|match|matches)\b"
    r"|\bnot (?:(?:directly|actually|really|truly) )?(?:connected|linked|related|matched|a match"
    r"|a (?:(?:real|valid|genuine|true) )?(?:connection|link|pair))\b"
    r"|\b(?:is|are|was|were|do|does|did)n[’']t (?:(?:directly|actually|really) )?"
    r"(?:connected|linked|related|share|count)\b"
    r"|\b(?:do|does|did) not (?:share|count)\b|\bun(?:related|connected|linked)\b|\bnear[- ]miss(?:es)?\b"
    r"|\b(?:share|shares|shared|has|have|had) (?:no|nothing)\b",
    re.IGNORECASE,
)
# Natural phrasings, matched on whitespace-collapsed lines without strong separators. _RELATION links the
# people before it to those after it ("A is connected to B"); _GROUP_PREDICATE ends a list of people who are
# all connected ("A, B and C are connected"). The bounded word runs keep the search linear.
_RELATION = re.compile(
    r" (?:(?:is|are|was|were|seems to be|appears to be) )?(?:(?:also|directly|clearly|definitely) )?"
    r"(?:connected|linked|related|tied|associated) (?:to|with) "
    r"| (?:shares?|shared|sharing) (?:[^ ]+ ){0,5}?with "
    r"| (?:has|have|had) (?:an? |the )?(?:(?:direct|clear|strong) )?(?:connection|link|relationship) (?:to|with) "
    r"| (?:connects|links) (?:to|with) ",
    re.IGNORECASE,
)
_GROUP_PREDICATE = re.compile(
    r" (?:are|were) (?:(?:all|both|also|directly|clearly|mutually) )*(?:connected|linked|related)\b"
    r"| (?:(?:all|both) )?share[sd]?\b",
    re.IGNORECASE,
)
# Every cue holds one of these in lower case (whole words "no", "not", "nothing", or "n't", ...), so a lowered
# line without them needs no search for cues. "phone" or "Nolan" hold no hint. The hints avoid "i" and "s",
# which the case-insensitive cues also match as "ı" and "ſ".
_NEGATION_HINT = re.compile(r"\bno(?:t|thing)?\b|n['’]t\b|un(?:related|connected|l)|near|thout")
_NO_CELLS = frozenset({"no", "false", "✗", "✘", "❌", "none", "not connected", "unconnected", "unrelated"})
_NEGATABLE_KEYS = ("connected", "linked", "is_connected", "related", "match", "valid")
_REMARK_KEYS = frozenset({"reason", "note", "notes", "remark", "comment", "status", "evidence", "why", "cue", "detail"})
_MARKER_LINE = re.compile(r"^[ \t#>*_`]*(?:final[ \t]+)?connections[ \t*_`]*(?::|$)", re.IGNORECASE | re.MULTILINE)
_MARKER_UPPER = re.compile(r"CONNECTIONS[ \t*_`]*:")
_BULLET = re.compile(r"(?:[-*•+·‣▪◦●○■□►▶>–—]+|\(?\d{1,4}[.):]|#{1,6})(?: |$)|\(?\d{1,4}[.)]")
_EDGE_MARKUP = ' *_`"“”«»'
_INNER_GROUP = re.compile(r"\(([^()\[\]{}]*)\)|\[([^()\[\]{}]*)\]|\{([^()\[\]{}]*)\}")
_PAREN = re.compile(r"\(([^()]*)\)")
_TABLE_RULE = frozenset("-: ")
_JSON_START = re.compile(r"\[(?=\s*[\"\[{])|\{(?=\s*\")")
_DECODER = json.JSONDecoder()  # stateless between calls; json.loads shares one the same way
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit: a text without one names nobody
# The strong separators of _SEP (every token but a single hyphen, ",", ";", "&" and " and "); with exactly one
# of them and two roster names around it a line is read by the fast path (``_Parser.simple_pair``).
_STRONG_SEP = re.compile(r"-{2,}>?|->|<-+>?|<=>|=>|[—–―‒↔⟷⇔→⟶⇒←⟵⇐]")
_NOT_SIMPLE = re.compile(r"[(:,;|]")  # parentheses, colons, lists and tables: the full rules apply
_GROUP_END = re.compile(r"(?<=[)\]}])\s*[,;]\s*")  # between bracketed groups: "(A, B), (C, D)"
_DISPLAY_STRIP = " \t\r\n*_`\"'“”‘’«»"  # markup around a name as the roster writes it (``_Roster.display``)
_KEY_PAIRS = (
    ("source", "target"), ("from", "to"), ("a", "b"), ("u", "v"), ("src", "dst"), ("left", "right"),
    ("person1", "person2"), ("person_1", "person_2"), ("person_a", "person_b"), ("persona", "personb"),
    ("name1", "name2"), ("name_1", "name_2"), ("node1", "node2"), ("node_1", "node_2"), ("p1", "p2"),
    ("first", "second"), ("first_person", "second_person"),
)  # fmt: skip


def parse_edges(output: object, roster: Sequence[str], *, groups: bool = False) -> list[str]:
    """Predicted edge items (deduplicated, first-seen order) from any model output; never raises.

    When the output has ``CONNECTIONS:`` markers only the answer block is read (module docstring: the
    block of the last marker followed by a pair, else nothing after an upper-case or "none" marker, else
    the whole output); lines with negation cues give no pairs. JSON values found in that text (at most
    ``_MAX_JSON_ATTEMPTS`` decode attempts) give pairs: a list of two names, a list of such lists, objects
    with known key pairs (``source``/``target``, ``from``/``to``, ...) or two name-like string values,
    adjacency objects (``{"A": ["B", "C"]}``), lists of pair strings (``["A -- B"]``), and anything of
    these nested in objects such as ``{"connections": [...]}``. A list of strings is read as lines when
    one of them holds a strong separator, otherwise as names: two names are a pair (emitted unless both
    are junk), three or more are a group (``groups=True``; ignored without groups). Decoded JSON text is
    not read again as lines; the rest of the text is read line by line (module docstring). ``roster``
    holds the names of the people in the prompt; see the module docstring for how parts resolve to them.
    """
    try:
        return _parse_unguarded(output, roster, groups=groups)
    except Exception:  # pragma: no cover - last resort; the parser is meant not to raise at all
        return []


def _parse_unguarded(output: object, roster: Sequence[str], *, groups: bool = False) -> list[str]:
    if not isinstance(output, str):
        output = "" if output is None else str(output)
    if isinstance(roster, str):
        roster = [roster]
    names = _cached_roster(tuple(roster) if roster is not None else ())
    return _answer_items(bounded_output(output), lambda text: _Parser(names, groups).run(text))


_last_roster: tuple[tuple, _Roster] | None = None  # (names, roster) of the last call: re-scoring one doc


def _cached_roster(names: tuple) -> _Roster:
    """The normalized roster of a prompt, built once per roster (a 128k prompt has hundreds of people).

    The same tuple object as in the last call is recognized without hashing it (hundreds of names)."""
    global _last_roster
    last = _last_roster
    if last is not None and last[0] is names:
        return last[1]
    try:
        roster = _roster(names)
    except TypeError:  # unhashable entries: build it uncached (they normalize to nothing anyway)
        return _Roster(names)
    _last_roster = (names, roster)
    return roster


@lru_cache(maxsize=32)
def _roster(names: tuple) -> _Roster:
    return _Roster(names)


def _answer_items(text: str, parse: Callable[[str], list[str]]) -> list[str]:
    """Apply the marker rule of the module docstring; ``parse`` reads a text without markers."""
    markers = _markers(text)
    if not markers:
        return parse(text)
    empty_answer = False
    parsed = 0
    for i in range(len(markers) - 1, -1, -1):  # the last marker followed by a pair starts the answer
        _, end, strong = markers[i]
        stop = markers[i + 1][0] if i + 1 < len(markers) else len(text)
        if parsed < _MAX_BLOCKS and _ALNUM.search(text, end, stop):  # without letters a block names nobody
            parsed += 1
            items = parse(text[end:stop])
            if items:
                return items
        empty_answer = empty_answer or strong or _says_none(text[end:stop])
    return [] if empty_answer else parse(text)


def _markers(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, upper-case?) of every marker, overlapping line and upper-case matches merged."""
    lower = text.lower()
    if "nnect" not in lower:  # in every marker; n, e, c, t have no other case-insensitive forms
        return []
    spans = sorted([(m.start(), m.end(), False) for m in _line_markers(text, lower)]
                   + [(m.start(), m.end(), True) for m in _MARKER_UPPER.finditer(text)])
    merged: list[tuple[int, int, bool]] = []
    for start, end, strong in spans:
        if merged and start < merged[-1][1]:
            previous = merged[-1]
            merged[-1] = (previous[0], max(previous[1], end), previous[2] or strong)
        else:
            merged.append((start, end, strong))
    return merged


def _line_markers(text: str, lower: str) -> Iterator[re.Match[str]]:
    """``_MARKER_LINE.finditer(text)``, trying the pattern only at the start of lines that hold "nnect" (each
    line once) instead of at every position: several times faster on a JSON answer with a "connections" key."""
    if len(lower) != len(text):  # lower() changed lengths, so its positions are not the text's
        yield from _MARKER_LINE.finditer(text)
        return
    found = lower.find("nnect")
    while found >= 0:
        match = _MARKER_LINE.match(text, text.rfind("\n", 0, found) + 1)  # a line marker starts its line
        if match is not None:
            yield match
        line_end = text.find("\n", found)
        found = lower.find("nnect", line_end) if line_end >= 0 else -1


def _says_none(block: str) -> bool:
    """True when the first non-blank line of a block is an explicit empty answer ("none", "n/a", ...)."""
    for line in block.splitlines():
        text = " ".join(line.split()).strip(_NONE_STRIP).lower()
        if text:
            return text in _NONE_ANSWERS
    return False


class _Roster:
    """Normalized roster names with exact lookup and linear whole-word substring search."""

    def __init__(self, names: Iterable[object]) -> None:
        self.names: set[str] = set()
        # A name as the roster writes it -> its normalized form: most parts are written so, and looking them up
        # skips normalizing them (markup in _DISPLAY_STRIP normalizes to nothing, so the result is the same).
        # Names holding a strong separator are left out, so a display name never splits a line or a JSON pair.
        self.display: dict[str, str] = {}
        longest = 0
        for name in names:
            key = normalize_name(name) if isinstance(name, str) else ""
            if key:
                self.names.add(key)
                if not _STRONG_SEP.search(name):
                    self.display[name.strip(_DISPLAY_STRIP)] = key
                longest = max(longest, key.count(" ") + 1)
        self.max_words = min(longest, _MAX_NGRAM)
        self.words = {word for name in self.names for word in name.split()}
        # Surname -> the one person who has it, or None when it is ambiguous: two or more people have it
        # as their surname, or somebody has it as a given name ("Calloway" for Oskar and Soren Calloway).
        holders: dict[str, set[str]] = {}
        given: dict[str, set[str]] = {}
        for name in self.names:
            words = name.split()
            if len(words) < 2:
                continue
            given.setdefault(words[0], set()).add(name)
            for surname in {" ".join(words[1:]), words[-1]}:
                holders.setdefault(surname, set()).add(name)
        self.surnames: dict[str, str | None] = {
            surname: next(iter(people)) if len(people | given.get(surname, set())) == 1 else None
            for surname, people in holders.items() if surname not in self.names
        }

    def negated(self, line: str) -> bool:
        """True when a whitespace-collapsed line holds a negation cue that is not made of name words."""
        if not _NEGATION_HINT.search(line.lower()):
            return False
        for match in _NEGATION.finditer(line):
            if not set(normalize_name(match.group()).split()) <= self.words:
                return True
        return False

    def resolve(self, raw: str, norm: str) -> tuple[str | None, bool, bool]:
        """(roster name, exact?, ambiguous surname?) for a part; no name when it names nobody or several
        people. A part that is exactly a surname resolves to its one holder ("Morrow", "Ms. Morrow's");
        a surname several people share resolves to nobody and is flagged ambiguous."""
        if not norm or not self.names:
            return None, False, False
        if norm in self.names:
            return norm, True, False
        if raw.count(",") == 1:  # "Morrow, Lena"
            last, first = raw.split(",")
            swapped = normalize_name(f"{first} {last}")
            if swapped in self.names:
                return swapped, True, False
        if "'" in raw or "’" in raw:  # "Lena Morrow's phone"
            norm = normalize_name(_POSSESSIVE.sub("", raw))
        if norm in self.surnames:
            holder = self.surnames[norm]
            return holder, holder is not None, holder is None
        words = norm.split()
        found = None
        covered = 0  # end of the rightmost hit so far: hits ending there or earlier are contained in it
        for start in range(len(words)):
            for size in range(min(self.max_words, len(words) - start), 0, -1):
                if start + size <= covered:
                    break
                key = " ".join(words[start : start + size])
                if key in self.names:
                    if found is not None and key != found:
                        return None, False, False
                    found, covered = key, start + size
                    break
        return found, False, False


class _Part(NamedTuple):
    norm: str  # normalized text
    name: str | None  # the roster name it resolves to
    exact: bool  # resolved by equality (full name, "Last, First" or an unambiguous surname), not by substring
    words: int  # number of words when unresolved and name-like, else 0
    ambiguous: bool  # exactly a surname that several roster people share: a name, but nobody's

    @property
    def item_name(self) -> str:
        return self.name if self.name is not None else self.norm

    def good(self, strong: bool) -> bool:
        return self.name is not None or self.ambiguous or self.words >= (1 if strong else 2)


def _name_words(raw: str) -> int:
    """Number of words of a name-like text (1-4 capitalized words), 0 when it is not name-like."""
    if len(raw) > _MAX_NAME_CHARS:
        return 0
    words = [w for w in (w.strip("'’.-") for w in _NON_NAME_CHARS.sub(" ", raw).split()) if w]
    start = 0
    while start < len(words) - 1 and words[start].lower() in TITLES:
        start += 1
    words = words[start:]
    if not 1 <= len(words) <= 4:
        return 0
    capital = False
    for word in words:
        low = word.lower()
        if low in _NOT_NAMES:
            return 0
        core = word.replace("-", "").replace("'", "").replace("’", "").replace(".", "")
        if not core.isalpha():
            return 0
        if word[0].isupper():
            capital = True
        elif low not in _PARTICLES:
            return 0
    return len(words) if capital else 0


def _separators(text: str) -> list[tuple[int, int, int]]:
    """(start, end, kind) of every pair separator in a whitespace-collapsed text."""
    found = []
    for match in _SEP.finditer(text):
        start, end = match.span()
        token = match.group()
        if token == "-":  # a hyphen separates only with a space on both sides; else it is inside a word
            if 0 < start and end < len(text) and text[start - 1] == " " and text[end] == " ":
                found.append((start, end, _WEAK))
        elif token in ",;":
            found.append((start, end, _LIST))
        elif token == "&" or token.lower() == " and ":
            found.append((start, end, _WEAK))
        else:
            found.append((start, end, _STRONG))
    return found


def _pieces(line: str) -> list[str]:
    """A line longer than ``_MAX_LINE_CHARS`` as lines of its own: the pieces between its bracketed groups
    when it starts with a bracket, else between its semicolons, else between its commas; a piece that is still
    too long is cut. (A real answer line is short; a long one is a list of pairs or junk.)"""
    body = line.lstrip(" >*_`#-•")
    if body[:1] in "([{" and _GROUP_END.search(line):
        pieces = _GROUP_END.split(line)
    elif ";" in line:
        pieces = line.split(";")
    else:
        pieces = line.split(",")
    return [piece[:_MAX_LINE_CHARS] for piece in pieces]


def _split(text: str, separators: Iterable[tuple[int, int, int]]) -> list[str]:
    pieces, position = [], 0
    for start, end, _kind in separators:
        pieces.append(text[position:start])
        position = end
    pieces.append(text[position:])
    return pieces


def _is_heading(line: str) -> bool:
    """A markdown heading or a label line ending with a colon ("**Not connected:**")."""
    return line.lstrip(" >*_`").startswith("#") or line.rstrip(" *_`").endswith(":")


def _strip_bullets(line: str) -> tuple[str, bool]:
    bullet = False
    for _ in range(3):
        match = _BULLET.match(line)
        if match is None or not match.group():
            break
        line, bullet = line[match.end() :].lstrip(), True
    return line, bullet


class _Parser:
    def __init__(self, roster: _Roster, groups: bool) -> None:
        self.roster = roster
        self.groups = groups
        self.items: dict[str, None] = {}
        self.header: str | None = None  # the person of a "Name:" line whose bulleted list follows
        self.negated_section = False  # inside a list under a negation heading ("Not connected:")
        self.section_has_lines = False  # a blank line ends a negated section only once it has lines
        self._parts: dict[str, _Part] = {}
        self._separator_cache: dict[str, list[tuple[int, int, int]]] = {}
        self._plain_lines: set[str] = set()  # lines read from and back to the plain state (``lines``)
        self.work = _MAX_WORK  # left of the budget: separators split and JSON values walked

    # --- items ----------------------------------------------------------------------------------

    def add(self, a: str, b: str, *, self_pair: bool = False) -> None:
        """Record the edge a-b; a self pair only when ``self_pair`` (one explicit "A -- A" pair)."""
        if a != b or self_pair:
            self.items.setdefault(_item(a, b), None)

    def part(self, raw: str) -> _Part:
        cached = self._parts.get(raw)
        if cached is None:
            name = self.roster.display.get(raw.strip(_DISPLAY_STRIP))
            if name is not None:  # a roster name as written: resolve() would find it exactly
                cached = self._parts[raw] = _Part(name, name, True, 0, False)
                return cached
            norm = normalize_name(raw)
            name, exact, ambiguous = self.roster.resolve(raw, norm)
            words = _name_words(raw) if name is None and norm else 0
            cached = self._parts[raw] = _Part(norm, name, exact, words, ambiguous)
        return cached

    def emit_parts(self, raws: Iterable[str], *, strong: bool, chain: bool) -> bool:
        """Apply the part rules of the module docstring; True when something was emitted."""
        parts = [p for p in (self.part(raw) for raw in raws) if p.norm]
        end, start = len(parts), 0
        while end - start > 2 and not parts[end - 1].good(strong):
            end -= 1
        while end - start > 2 and not parts[start].good(strong):
            start += 1
        parts = parts[start:end]
        if len(parts) < 2:
            return False
        if len(parts) == 2:
            first, second = (p.good(strong) for p in parts)
            if not (first or second) or (not strong and not (first and second)):
                return False
            self.add(parts[0].item_name, parts[1].item_name, self_pair=strong)
            return True
        if not all(p.good(strong) for p in parts):
            return False
        names = [p.item_name for p in parts]
        if self.groups:
            if len(names) > MAX_GROUP:
                return False
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    self.add(a, b)
            return True
        if strong and chain:
            for a, b in zip(names, names[1:], strict=False):
                self.add(a, b)
            return True
        return False

    # --- text -----------------------------------------------------------------------------------

    def run(self, text: str) -> list[str]:
        self.parse(text)
        return list(self.items)

    def parse(self, text: str) -> None:
        position = 0
        for start, end, value in _json_values(text):
            self.lines(text[position:start])
            self.header = None
            if self.negated_section:
                self.section_has_lines = True  # JSON listed under "Not connected:" is skipped too
            else:
                self.walk(value, 0)
            position = end
        self.lines(text[position:])

    def separators(self, text: str) -> list[tuple[int, int, int]]:
        """``_separators(text)``, computed once per text: a line's segments are split several times. Each
        separator costs one unit of the work budget."""
        found = self._separator_cache.get(text)
        if found is None:
            found = self._separator_cache[text] = _separators(text)
            self.work -= len(found)
        return found

    def plain(self) -> bool:
        """True when nothing is pending: no ``Name:`` header, no negated section."""
        return self.header is None and not self.negated_section and not self.section_has_lines

    def lines(self, text: str) -> None:
        self.read(text.splitlines())

    def read(self, lines: Iterable[str]) -> None:
        seen = self._plain_lines
        for line in lines:
            if line in seen and self.plain():
                continue  # read before from the plain state and back to it: it adds nothing new
            was_plain = self.plain()
            self.line(line)
            if was_plain and self.plain():
                seen.add(line)

    def line(self, raw: str) -> None:
        line = " ".join(raw.split())
        if not line:
            if self.section_has_lines:
                self.negated_section = self.section_has_lines = False
            return  # a blank line keeps a pending "Name:" header
        if self.simple_pair(line):
            return
        if len(line) > _MAX_LINE_CHARS:
            self.read(_pieces(line))
            return
        if self.work <= 0:
            return  # the budget is spent: a degenerate output, read no further
        if self.skip_negated(line):
            return  # a skipped line keeps a pending "Name:" header too
        line, bullet = _strip_bullets(line)
        line = line.strip(_EDGE_MARKUP)
        header, self.header = self.header, None
        if not line:
            return
        if line[0] == "|":
            self.table_row(line)
            return
        if line[0] in "([{" and self.tuples(line):
            return
        line = " ".join(_PAREN.sub(self._paren, line).split("(", 1)[0].split())
        segments = line.split(":")
        head = segments[0]
        if not self.separators(head):
            if header is not None and bullet:
                person = self.part(head)
                if person.name is not None or person.ambiguous:
                    self.add(header, person.item_name)
                    self.header = header
                    return
            if len(segments) > 1:
                person = self.part(head)
                if person.name is not None or person.ambiguous:
                    rest = segments[1]
                    if len(segments) == 2 and not rest.strip(_EDGE_MARKUP + ".-"):
                        self.header = person.item_name
                        return
                    if self.star(person.item_name, rest):
                        return
        for segment in segments:
            if self.separators(segment) or _RELATION.search(segment):
                self.text(segment)
                return

    def simple_pair(self, line: str) -> bool:
        """Fast path for ``A -- B`` (bullets and markdown allowed): one strong separator between two roster
        names as the roster writes them. Such a line holds no negation cue outside the names (a cue made of name
        words does not count), no colon, parenthesis or list, so the full rules give exactly this pair."""
        if self.negated_section or len(line) > _MAX_LINE_CHARS or _NOT_SIMPLE.search(line):
            return False
        body = _strip_bullets(line)[0].strip(_EDGE_MARKUP)
        sides = _STRONG_SEP.split(body)
        if len(sides) != 2 or body[:1] in "|([{":
            return False
        a = self.roster.display.get(sides[0].strip(_DISPLAY_STRIP))
        b = self.roster.display.get(sides[1].strip(_DISPLAY_STRIP))
        if a is None or b is None:
            return False
        self.header = None
        self.add(a, b, self_pair=True)
        return True

    def skip_negated(self, line: str) -> bool:
        """True for a line that must not give pairs: it holds a negation cue or sits in a negated section."""
        negated = self.roster.negated(line)
        if self.negated_section:
            if negated or not _is_heading(line):
                self.section_has_lines = True
                return True
            self.negated_section = self.section_has_lines = False  # another heading ends the section
            return False
        if negated and _is_heading(line):
            self.negated_section, self.section_has_lines = True, False
        return negated

    def _paren(self, match: re.Match[str]) -> str:
        inner = match.group(1)
        return f" {inner} " if self.part(inner).exact else " "

    def text(self, segment: str) -> bool:
        separators = self.separators(segment)
        strong = any(kind == _STRONG for _, _, kind in separators)
        if not strong and (self.relation(segment) or self.statement(segment)):
            return True
        if not separators:
            return False
        if strong:
            boundaries = [s for s in separators if s[2] == _LIST]
            strong_pieces = _split(segment, [s for s in separators if s[2] == _STRONG])
            if boundaries and not all(self.part(piece).exact for piece in strong_pieces):  # "Morrow, Lena"
                chunks = [c for c in _split(segment, boundaries) if any(k == _STRONG for *_, k in self.separators(c))]
                if len(chunks) >= 2:
                    emitted = False
                    for chunk in chunks:
                        emitted |= self.pairs(chunk, self.separators(chunk))
                    return emitted
        return self.pairs(segment, separators)

    def pairs(self, segment: str, separators: list[tuple[int, int, int]]) -> bool:
        strong = any(kind == _STRONG for _, _, kind in separators)
        if not strong:
            return self.emit_parts(_split(segment, separators), strong=False, chain=True)
        pieces = _split(segment, [s for s in separators if s[2] == _STRONG])
        if self.groups:  # a group may also use commas or "and": split the pieces that are not one name
            raws = []
            for piece in pieces:
                raws.extend([piece] if self.part(piece).exact else _split(piece, self.separators(piece)))
            pieces = raws
        return self.emit_parts(pieces, strong=True, chain=True)

    def relation(self, segment: str) -> bool:
        """``A is connected to B``, ``A shares a phone with B and C``: every subject with every object."""
        match = _RELATION.search(segment)
        if match is None:
            return False
        subjects = self.names_of(segment[: match.start()], trim="start")
        objects = self.names_of(segment[match.end() :], trim="end")
        if not subjects or not objects:
            return False
        for a in subjects:
            for b in objects:
                self.add(a, b)
        return True

    def statement(self, segment: str) -> bool:
        """``A, B and C are connected``, ``A and B share a plate``: a group, even without ``groups``."""
        match = _GROUP_PREDICATE.search(segment)
        if match is None:
            return False
        names = self.names_of(segment[: match.start()], trim="start")
        if not 2 <= len(names) <= MAX_GROUP:
            return False
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                self.add(a, b)
        return True

    def names_of(self, text: str, trim: str) -> list[str]:
        """The item names of a list of people (``A``, ``A and B``, ``A, B, and C``), or [] when some listed
        part is neither a roster name nor a name of 2-4 words. Parts that are no names are dropped first
        from the start (``So, A``) or from the end (``B, both pilots``) while more than one part remains."""
        parts = [p for p in (self.part(raw) for raw in _split(text, self.separators(text))) if p.norm]
        if trim == "start":
            while len(parts) > 1 and not parts[0].good(False):
                parts.pop(0)
        else:
            while len(parts) > 1 and not parts[-1].good(False):
                parts.pop()
        if not parts or not all(p.good(False) for p in parts):
            return []
        return [p.item_name for p in parts]

    def tuples(self, line: str) -> bool:
        handled = False
        done: set[str] = set()  # text() only adds items, so a repeated group adds nothing
        for match in _INNER_GROUP.finditer(line):
            inner = next((g for g in match.groups() if g is not None), "")
            if inner not in done and self.separators(inner):
                handled = True
                done.add(inner)
                self.text(inner)
        return handled

    def star(self, center: str, rest: str) -> bool:
        parts = [p for p in (self.part(raw) for raw in _split(rest, self.separators(rest))) if p.norm]
        if not parts or not all(p.exact or p.ambiguous or p.words >= 2 for p in parts):
            return False
        for p in parts:
            self.add(center, p.item_name)
        return True

    def table_row(self, line: str) -> None:
        cells = [c.strip(_EDGE_MARKUP) for c in line.strip("|").split("|")]
        cells = [c for c in cells if c and not c.isdigit()]
        if len(cells) < 2 or all(set(c) <= _TABLE_RULE for c in cells):
            return
        if any(c.strip().lower() in _NO_CELLS for c in cells[2:]):
            return  # a "Connected?" column saying no
        first, second = self.part(cells[0]), self.part(cells[1])
        if first.name is not None and second.name is not None:
            self.add(first.name, second.name, self_pair=True)

    # --- JSON -----------------------------------------------------------------------------------

    def walk(self, value: object, depth: int) -> None:
        self.work -= 1
        if depth > _MAX_JSON_DEPTH or self.work <= 0:
            return
        if isinstance(value, dict):
            self.walk_object(value, depth)
        elif isinstance(value, list):
            if len(value) == 2 and self.json_pair(value):
                return
            strings = [v for v in value if isinstance(v, str)]
            if strings and len(strings) == len(value):
                if any(any(k == _STRONG for *_, k in self.separators(" ".join(s.split()))) for s in strings):
                    for s in strings:
                        self.lines(s)
                        self.header = None
                else:
                    self.emit_parts(strings, strong=True, chain=False)
                return
            for v in value:
                if isinstance(v, (list, dict)):
                    self.walk(v, depth + 1)
                elif isinstance(v, str) and self.separators(" ".join(v.split())):
                    self.lines(v)
                    self.header = None

    def json_pair(self, value: list) -> bool:
        """Fast path for ``["A", "B"]`` with two roster names as written (no strong separator in them, so the
        rules below read it as this one pair)."""
        a, b = value
        if not (isinstance(a, str) and isinstance(b, str)):
            return False
        a, b = self.roster.display.get(a.strip(_DISPLAY_STRIP)), self.roster.display.get(b.strip(_DISPLAY_STRIP))
        if a is None or b is None:
            return False
        self.add(a, b, self_pair=True)
        return True

    def walk_object(self, value: dict, depth: int) -> None:
        lower = {k.lower(): v for k, v in value.items() if isinstance(k, str)}
        if self.negated_object(lower):
            return
        for key_a, key_b in _KEY_PAIRS:
            a, b = lower.get(key_a), lower.get(key_b)
            if isinstance(a, str) and isinstance(b, str):
                self.emit_parts([a, b], strong=True, chain=False)
                return
        adjacency = False
        for key, neighbours in value.items():
            if not isinstance(key, str) or not self.part(key).exact:
                continue
            if isinstance(neighbours, str):
                neighbours = [neighbours]
            if not isinstance(neighbours, list):
                continue
            center = self.part(key).item_name
            for other in neighbours:
                if isinstance(other, str) and self.part(other).good(True):
                    adjacency = True
                    self.add(center, self.part(other).item_name)
        if adjacency:
            return
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 2:
            parts = [self.part(s) for s in strings]
            if all(p.good(False) for p in parts):
                self.add(parts[0].item_name, parts[1].item_name, self_pair=True)
                return
        elif len(strings) > 2:
            names = {p.name for p in map(self.part, strings) if p.name is not None}
            if len(names) == 2:
                self.add(*names)
                return
        for v in value.values():
            if isinstance(v, (list, dict)):
                self.walk(v, depth + 1)

    def negated_object(self, lower: dict) -> bool:
        """True for one edge's object that says it is no connection: ``{"a": .., "b": .., "connected": false}``
        or a remark (``reason``, ``note``, ...) with a negation cue. Objects holding lists of pairs or
        nested objects are containers, never negated as a whole."""
        if any(isinstance(v, dict) or isinstance(v, list) and (len(v) > 2 or not all(isinstance(x, str) for x in v))
               for v in lower.values()):
            return False
        for key in _NEGATABLE_KEYS:
            flag = lower.get(key)
            if flag is False or isinstance(flag, str) and flag.strip().lower() in _NO_CELLS:
                return True
        return any(isinstance(v, str) and self.roster.negated(" ".join(v.split()))
                   for k, v in lower.items() if k in _REMARK_KEYS)


def _json_values(text: str) -> list[tuple[int, int, object]]:
    """(start, end, value) of JSON values decoded from left to right, at most _MAX_JSON_ATTEMPTS tries."""
    decoder = _DECODER
    values: list[tuple[int, int, object]] = []
    attempts = covered = 0
    for match in _JSON_START.finditer(text):
        start = match.start()
        if start < covered:
            continue
        if attempts >= _MAX_JSON_ATTEMPTS:
            break
        attempts += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except Exception:  # ValueError on bad JSON, RecursionError on absurd nesting
            continue
        values.append((start, end, value))
        covered = end
    return values
