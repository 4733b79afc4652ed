"""Reading a module for needlessly slow functions, as a reviewer does: the reference solver of the code kind.

It reads the source only (it never runs it: a prompt is untrusted text) and flags a function when, inside one of
its loops, it does work proportional to a whole collection: a membership test on a list, ``.index`` or ``.count``,
``sum``, ``sorted``, ``max`` or ``min`` of a collection or a slice of one, growing a string by concatenation, or an
inner loop whose bound is the outer loop's variable; or when it tries divisors all the way up to a number it was
given. Each rule is a general smell, not a template: the plain utilities and the efficient look-alikes do the same
jobs with a set, a dict, ``join``, a square-root bound or work hoisted out of the loop, and are not flagged.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

WHOLE_COLLECTION_CALLS = ("sum", "sorted", "max", "min")
SCANNING_METHODS = ("index", "count")


def _assigned(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """The last value assigned to each plain local name (the module's locals are assigned once)."""
    out: dict[str, ast.expr] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, node.value)
    return out


def _is_list(value: ast.expr | None) -> bool:
    return isinstance(value, (ast.List, ast.ListComp)) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list")


def _is_text(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def _loops(node: ast.AST) -> Iterator[ast.For | ast.While]:
    for child in ast.walk(node):
        if isinstance(child, (ast.For, ast.While)):
            yield child


def _in_loop_body(loop: ast.For | ast.While) -> Iterator[ast.AST]:
    for statement in loop.body:
        yield from ast.walk(statement)


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def slow_reasons(function: ast.FunctionDef) -> list[str]:
    """Why ``function`` costs more than linear time, one reason per smell found (empty when none)."""
    assigned = _assigned(function)
    lists = {name for name, value in assigned.items() if _is_list(value)}
    texts = {name for name, value in assigned.items() if _is_text(value)}
    reasons: list[str] = []
    for loop in _loops(function):
        outer = _names(loop.target) if isinstance(loop, ast.For) else set()
        for node in _in_loop_body(loop):
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                if any(isinstance(c, ast.Name) and c.id in lists for c in node.comparators):
                    reasons.append("membership test on a list inside a loop")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in SCANNING_METHODS and isinstance(node.func.value, ast.Name):
                    reasons.append(f".{node.func.attr}() scans a whole list inside a loop")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if (node.func.id in WHOLE_COLLECTION_CALLS and len(node.args) == 1 and not node.keywords
                        and _collection(node.args[0])):
                    reasons.append(f"{node.func.id}() of a whole collection inside a loop")
                if node.func.id == "range" and isinstance(loop, ast.For) and node is not getattr(loop, "iter", None):
                    bound = node.args[1] if len(node.args) > 1 else node.args[0] if node.args else None
                    if isinstance(bound, ast.Name) and bound.id in outer:
                        reasons.append("an inner loop up to the outer loop's value")
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
                target = node.targets[0]
                if (isinstance(target, ast.Name) and target.id in texts and isinstance(node.value.op, ast.Add)
                        and isinstance(node.value.left, ast.Name) and node.value.left.id == target.id):
                    reasons.append("a string grown by concatenation inside a loop")
            elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                if isinstance(node.target, ast.Name) and node.target.id in texts:
                    reasons.append("a string grown by concatenation inside a loop")
    reasons += _divisors_up_to_a_parameter(function)
    return list(dict.fromkeys(reasons))


def _collection(node: ast.expr) -> bool:
    """A name, or a slice of one (``values[:k]``)."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Slice)
    return isinstance(node, ast.Name)


def _divisors_up_to_a_parameter(function: ast.FunctionDef) -> list[str]:
    """``for d in range(2, n)`` over a parameter ``n`` whose body takes ``n % d``: trial division to n."""
    parameters = {arg.arg for arg in function.args.args}
    for loop in _loops(function):
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Call)
                and isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "range" and loop.iter.args):
            continue
        bound = loop.iter.args[-1] if len(loop.iter.args) <= 2 else None
        if not (isinstance(bound, ast.Name) and bound.id in parameters):
            continue
        for node in _in_loop_body(loop):
            if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Name)
                    and node.left.id == bound.id and isinstance(node.right, ast.Name)
                    and node.right.id == loop.target.id):
                return ["trial division up to the number itself"]
    return []


def parse_module(source: str) -> ast.Module | None:
    """The module's syntax tree, or None for text that is not Python (or nests past the parser's limits): a
    prompt is untrusted text."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def slow_functions(source: str) -> list[tuple[str, list[str]]]:
    """(name, reasons) of every top-level function with a smell, in module order; [] for source that does not
    parse."""
    tree = parse_module(source)
    if tree is None:
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and (reasons := slow_reasons(node)):
            found.append((node.name, reasons))
    return found


def function_names(source: str) -> list[str]:
    """Every top-level function of a module, in order ([] for source that does not parse)."""
    tree = parse_module(source)
    if tree is None:
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
