"""What a shortcut can read off a module without judging cost: each function's name, text, docstring, size,
nesting, loop keywords and place. Shared by the code kind's shortcut strategies, probes and learned probe."""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from .code import nesting_depth
from .prompt import module_source
from .review import parse_module

# words a reader hunting for slow code might grep for: whole-collection calls, membership tests, list lookups,
# string building; the efficient twins use most of them too
SUSPECT = re.compile(r"\bsum\(|\bsorted\(|\.index\(|\bnot in\b|\bin [a-z_]+:|= [a-z_]+ \+ ")


@dataclass(frozen=True)
class Surface:
    name: str
    text: str
    doc: str
    chars: int
    lines: int
    depth: int
    loops: int
    ins: int
    suspects: int
    position: float  # place in the module, 0 (first) .. 1 (last)
    doc_count: int  # functions of the module with this docstring (look-alikes share one)


@lru_cache(maxsize=64)
def surfaces(prompt: str) -> tuple[Surface, ...]:
    """Every top-level function of a code prompt's module, in order (empty for other prompts)."""
    source = module_source(prompt)
    if source is None:
        return ()
    tree = parse_module(source)
    if tree is None:
        return ()
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    docs = [ast.get_docstring(node) or "" for node in functions]
    counts = Counter(docs)
    out = []
    for k, (node, doc) in enumerate(zip(functions, docs, strict=True)):
        text = ast.get_source_segment(source, node) or ""
        out.append(Surface(node.name, text, doc, len(text), text.count("\n") + 1, nesting_depth(node),
                           len(re.findall(r"\b(?:for|while)\b", text)), len(re.findall(r"\bin\b", text)),
                           len(SUSPECT.findall(text)), k / max(len(functions) - 1, 1), counts[doc]))
    return tuple(out)
