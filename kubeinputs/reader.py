"""The one reader of input files: YAML and JSON documents, strict about keys written twice.

Every file this project reads (scenarios, and the Pod manifests, cadvisor MachineInfo
and KubeletConfiguration files they reference) goes through `load_file`, so all of them
follow the same rules:

- a key written twice in one map is an error naming its path, where it is written again
  and where first (YAML and JSON both allow it silently, the last one winning: the
  second would hide the first);
- syntax errors give the line and column;
- every problem is an `InputError` naming the file.

`.json` files are read with the `json` module (fast, and exactly JSON); anything else
with PyYAML's safe schema, through libyaml's C parser when PyYAML has it
(`yaml.CSafeLoader`), else the pure-Python one. A plain document (no anchors, aliases,
tags, timestamps or merge keys, and no problem) is built straight from the parser's
events; any other, and any document with a problem, goes through the node graph: the
loader composes it, and mappings are constructed here, which is where duplicates are
caught with the nodes' marks. Both give the same values; every error comes from the
node graph. PyYAML is imported on first use, so JSON input and commands that read
no YAML do not pay for it.

Writing (`dump_yaml`, for `--record`) keeps key order and never sorts; YAML comments
are not preserved.
"""
from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union

from kubeinputs.errors import ROOT, InputError, index_path, join_path
from kubeinputs.limits import DEFAULT_LIMITS, Limits, check_depth, flag, number_too_long, read_bytes

if TYPE_CHECKING:  # only in annotations: pathlib is slow to import
    from pathlib import Path

T = TypeVar("T")

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_TAG_KINDS = {_INT_TAG: "an integer", "tag:yaml.org,2002:float": "a floating-point number",
              "tag:yaml.org,2002:bool": "a boolean", "tag:yaml.org,2002:timestamp": "a date or timestamp"}
_SURROGATE = None  # compiled on first use: lone UTF-16 surrogates a JSON `\\ud800` escape leaves in a str


class _DuplicateJSONKey(Exception):
    """Raised from the JSON object hook; the YAML reader then finds the key's place."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _mark(mark: Any) -> str:
    """`line L, column C` (1-based) of a PyYAML mark."""
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _loader_class() -> type:
    """PyYAML's safe loader, on libyaml's C parser when available."""
    import yaml

    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


class _Builder:
    """Python values from a composed YAML node graph, refusing duplicate keys (with their places)."""

    def __init__(self, loader: Any, limits: Limits) -> None:
        self.loader = loader
        self.limits = limits
        self.done: dict[int, Any] = {}  # id(node) -> value: aliases share, recursion terminates
        self.depth = 0

    def build(self, node: Any, where: str) -> Any:
        """The value of `node`, found at path `where`."""
        if node.tag == _STR_TAG and node.id == "scalar":
            return node.value
        if node.id == "scalar" and node.tag == _INT_TAG and len(node.value) > self.limits.max_number_digits:
            raise InputError(where or ROOT, number_too_long(len(node.value), self.limits.max_number_digits))
        if node.id == "scalar" or node.tag not in (_MAP_TAG, _SEQ_TAG):
            return self._construct(node, where)
        known = self.done.get(id(node))
        if known is not None:
            return known
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise InputError(where or ROOT, f"nested deeper than {self.limits.max_depth} levels, the max_depth "
                                            f"limit (raise it with {flag('max_depth')})")
        try:
            if node.id == "sequence":
                items: list = []
                self.done[id(node)] = items
                items.extend(self.build(item, index_path(where, i)) for i, item in enumerate(node.value))
                return items
            return self._build_mapping(node, where)
        finally:
            self.depth -= 1

    def _construct(self, node: Any, where: str) -> Any:
        """Plain scalars (int, float, bool, null, timestamp, ...) and tagged collections (!!set,
        !!omap) as PyYAML's safe constructor builds them. What it cannot build is an InputError at
        `where`: its own ConstructorError, and the bare exceptions it lets out for a scalar that
        only looks like its type (`0x_`, `2020-13-45`, `!!bool maybe`, `!!int ''`)."""
        import yaml

        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise InputError(where or ROOT, _yaml_reason(exc)) from None
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
            raise InputError(where or ROOT, self._unreadable(node, exc)) from None

    def _unreadable(self, node: Any, exc: Exception) -> str:
        """`not valid YAML: line L, column C: '0x_' cannot be read as an integer: ...` (with the
        advice to quote a plain scalar that YAML 1.1 read as another type by its looks alone)."""
        from yaml.nodes import ScalarNode

        kind = _TAG_KINDS.get(node.tag) or "!!" + str(node.tag).rsplit(":", 1)[-1]
        detail = f": {exc}" if isinstance(exc, ValueError) and str(exc) else ""
        if node.id != "scalar":
            return f"not valid YAML: {_mark(node.start_mark)}: cannot build {kind}{detail}"
        implicit = not node.style and self.loader.resolve(ScalarNode, node.value, (True, False)) == node.tag
        advice = " (quote it to keep it a string)" if implicit else ""
        return f"not valid YAML: {_mark(node.start_mark)}: {node.value!r} cannot be read as {kind}{detail}{advice}"

    def _build_mapping(self, node: Any, where: str) -> dict:
        import yaml

        self.loader.flatten_mapping(node)  # `<<` merge keys, as the safe loader does
        result: dict = {}
        self.done[id(node)] = result
        first: dict = {}
        for key_node, value_node in node.value:
            key = self.build(key_node, where)
            try:
                hash(key)
            except TypeError:
                raise InputError(where or ROOT, f"not valid YAML: {_mark(key_node.start_mark)}: "
                                 "found an unhashable key") from None
            path = join_path(where, key)
            if key in first:
                raise InputError(path, f"found duplicate key {key!r} at {_mark(key_node.start_mark)} "
                                 f"(first at {_mark(first[key])})")
            first[key] = key_node.start_mark
            try:
                result[key] = self.build(value_node, path)
            except yaml.constructor.ConstructorError as exc:
                raise InputError(path, _yaml_reason(exc)) from None
        return result


def _yaml_reason(exc: Exception, text: Optional[str] = None) -> str:
    """`not valid YAML: line L, column C: problem` of a PyYAML error; a tab where the problem is
    (YAML indents with spaces only) is named, since PyYAML's words do not say it."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"not valid YAML: {_mark(mark)}: {problem}{_tab_note(text, mark)}"
    return f"not valid YAML: {problem}"


def _tab_note(text: Optional[str], mark: Any) -> str:
    """` (a tab ...)` when the problem's line is indented with a tab, else ""."""
    if text is None:
        return ""
    lines = text.split("\n")
    if not 0 <= mark.line < len(lines):
        return ""
    line = lines[mark.line]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if "\t" not in indent and not line[mark.column: mark.column + 1] == "\t":
        return ""
    return " (a tab in the indentation: YAML indents with spaces, never tabs)"


NOT_PLAIN = object()  # load_plain_yaml's answer when the document needs the node-graph reader
_PLAIN_TAGS = ("tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", _INT_TAG, "tag:yaml.org,2002:float")


def load_plain_yaml(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The document's values built straight from the parser's events, or NOT_PLAIN.

    For the common document: one document of maps, lists and scalars without tags, whose plain
    scalars are strings, integers, floats, booleans or nulls (anchors and aliases included: an alias
    shares the anchored value, as the node-graph reader does, and counts its expanded size). It
    builds no node graph and resolves each distinct plain scalar once; on a block-style file it
    takes about a third of the node-graph reader's time. Anything else, and every problem (syntax,
    a key written twice, a limit passed, a complex key, an alias to an unfinished or unknown
    anchor), answers NOT_PLAIN, so that load_yaml_graph gives the value or the error.
    Cost: O(events).
    """
    import yaml
    from yaml.events import (AliasEvent, MappingEndEvent, MappingStartEvent, ScalarEvent, SequenceEndEvent,
                             SequenceStartEvent, StreamEndEvent)
    from yaml.nodes import ScalarNode

    loader = _loader_class()(text)
    try:
        get = loader.get_event
        get()  # stream start
        event = get()
        if type(event) is StreamEndEvent:
            return None  # an empty stream; get_single_node answers None too
        max_depth, max_nodes, max_digits = limits.max_depth, limits.max_yaml_nodes, limits.max_number_digits
        str_tag, constructors, resolve = _STR_TAG, loader.yaml_constructors, loader.resolve
        plain: dict[str, Any] = {}  # plain scalar -> its value (resolution is by the text alone)
        anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, nodes once expanded)
        opened: set[str] = set()  # anchors of collections still open (an alias to one is a cycle)
        # open collections: [dict, key (NOT_PLAIN before a key), anchor, nodes before it] or [list, anchor, nodes]
        stack: list = []
        nodes = 0  # nodes so far, aliases expanded (the node graph's max_yaml_nodes count)
        while True:
            event = get()
            kind = type(event)
            if kind is ScalarEvent:
                if event.tag is not None:
                    return NOT_PLAIN
                value = event.value
                if event.implicit[0]:
                    known = plain.get(value, NOT_PLAIN)
                    if known is NOT_PLAIN:
                        tag = resolve(ScalarNode, value, (True, False))
                        if tag == str_tag:
                            known = value
                        elif tag in _PLAIN_TAGS and not (tag == _INT_TAG and len(value) > max_digits):
                            try:
                                known = constructors[tag](loader, ScalarNode(tag, value))
                            except Exception:  # e.g. `0x_`: the node-graph reader says what happens
                                return NOT_PLAIN
                        else:
                            return NOT_PLAIN  # a timestamp, a merge key, a too-long number, ...
                        plain[value] = known
                    value = known
                nodes += 1
                anchor = event.anchor
                if anchor is not None:
                    if anchor in anchors or anchor in opened:
                        return NOT_PLAIN  # defined twice
                    anchors[anchor] = (value, 1)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                anchor = event.anchor
                if event.tag is not None or len(stack) >= max_depth or nodes >= max_nodes:
                    return NOT_PLAIN
                if anchor is not None:
                    if anchor in anchors or anchor in opened:
                        return NOT_PLAIN
                    opened.add(anchor)
                stack.append([{}, NOT_PLAIN, anchor, nodes] if kind is MappingStartEvent else [[], anchor, nodes])
                nodes += 1
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                value, anchor, before = frame[0], frame[-2], frame[-1]
                if anchor is not None:
                    opened.discard(anchor)
                    anchors[anchor] = (value, nodes - before)
            elif kind is AliasEvent:
                known_anchor = anchors.get(event.anchor)
                if known_anchor is None:
                    return NOT_PLAIN  # unknown, or a collection that contains its own alias
                value, size = known_anchor
                nodes += size
            else:
                return NOT_PLAIN
            if nodes > max_nodes:
                return NOT_PLAIN
            if not stack:
                break
            top = stack[-1]
            if len(top) == 3:
                top[0].append(value)
            elif top[1] is NOT_PLAIN:  # a key
                if type(value) is dict or type(value) is list or value in top[0]:
                    return NOT_PLAIN  # a complex key, or one written twice
                top[1] = value
            else:
                top[0][top[1]] = value
                top[1] = NOT_PLAIN
        get()  # document end
        if not isinstance(loader.peek_event(), StreamEndEvent):
            return NOT_PLAIN  # more than one document
        return value
    except yaml.YAMLError:
        return NOT_PLAIN
    finally:
        loader.dispose()


def load_yaml_text(text: str, where: str = "", limits: Limits = DEFAULT_LIMITS) -> Any:
    """One YAML document as Python values; a syntax error or duplicate key is an InputError (a tab in
    the indentation and a file of several documents say so)."""
    value = load_plain_yaml(text, limits)
    return load_yaml_graph(text, where, limits) if value is NOT_PLAIN else value


def load_yaml_graph(text: str, where: str = "", limits: Limits = DEFAULT_LIMITS) -> Any:
    """load_yaml_text through the composed node graph: every YAML feature, and every error's text."""
    import yaml

    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, where, limits.max_yaml_nodes)
        return _Builder(loader, limits).build(node, where)
    except yaml.composer.ComposerError as exc:
        if "another document" not in str(exc.problem):
            raise InputError(where or ROOT, _yaml_reason(exc, text)) from None
        count = _document_count(text)
        raise InputError(where or ROOT, f"{count} YAML documents (separated by ---) where one is expected") from None
    except yaml.YAMLError as exc:
        raise InputError(where or ROOT, _yaml_reason(exc, text)) from None
    finally:
        loader.dispose()


def load_yaml_documents(text: str, where: str = "", limits: Limits = DEFAULT_LIMITS) -> list[Any]:
    """Every document of a YAML stream (`---` between them), each as `load_yaml_text` reads one; the
    paths of a later document's problems start with `[N]` (its place in the stream, from 0)."""
    import yaml

    loader = _loader_class()(text)
    docs: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            doc_where = index_path(where, len(docs)) if docs or loader.check_node() else where
            if node is None:
                docs.append(None)
                continue
            _check_expansion(node, doc_where, limits.max_yaml_nodes)
            docs.append(_Builder(loader, limits).build(node, doc_where))
    except yaml.YAMLError as exc:
        raise InputError(where or ROOT, _yaml_reason(exc, text)) from None
    finally:
        loader.dispose()
    return docs


def _document_count(text: str) -> int:
    """How many documents a YAML stream holds (counted up to its first syntax error)."""
    import yaml

    loader = _loader_class()(text)
    count = 0
    try:
        while loader.check_node():
            loader.get_node()
            count += 1
    except yaml.YAMLError:
        count += 1
    finally:
        loader.dispose()
    return count


def _check_expansion(root: Any, where: str, limit: int) -> None:
    """Refuse a document whose aliases expand past `limit` (max_yaml_nodes) nodes (a "billion laughs"
    bomb): the values are shared once built, but every reader after this one walks the expanded tree."""
    sizes: dict[int, int] = {}
    # iterative post-order over the node graph; an alias cycle counts as one node (it is refused later)
    stack: list = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes and not children_done:
            continue
        if node.id == "scalar":
            sizes[key] = 1
            continue
        children = [v for pair in node.value for v in pair] if node.id == "mapping" else node.value
        if not children_done:
            sizes[key] = 1  # provisional: breaks cycles
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(sizes.get(id(child), 1) for child in children)
        if total > limit:
            raise InputError(where or ROOT, f"expands to more than {limit:,} YAML nodes through its aliases, the "
                                            f"max_yaml_nodes limit (raise it with {flag('max_yaml_nodes')})")
        sizes[key] = total


def _json_int(limit: int, text: str) -> int:
    """A JSON integer; one past `limit` (max_number_digits) is refused (Python would raise past 4,300)."""
    if len(text) > limit:
        raise _TooLong(len(text))
    return int(text)


class _TooLong(Exception):
    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _replace_surrogates(doc: Any) -> Any:
    """Lone surrogates (from `\\ud800` escapes) become U+FFFD, as Go's encoding/json decodes them."""
    global _SURROGATE
    if _SURROGATE is None:
        import re

        _SURROGATE = re.compile("[\ud800-\udfff]")

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return _SURROGATE.sub("\ufffd", value)
        if isinstance(value, dict):
            return {fix(k): fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return fix(doc)  # depth already bounded by check_depth


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON (Python's json module accepts them by default)."""
    raise ValueError(f"{name} is not a JSON value")


def _strict_object(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object as a dict; a key written twice stops the decoding."""
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateJSONKey(key)
        result[key] = value
    return result


def _has_surrogate_escape(text: str) -> bool:
    """Whether the JSON text may hold a `\\uD800`-`\\uDFFF` escape (a cheap test before the walk)."""
    import re

    return re.search(r"\\u[dD][89a-fA-F]", text) is not None


def _levels_deeper_than(doc: Any, limit: int) -> bool:
    """Whether a decoded JSON document (a tree: nothing shared) nests containers deeper than `limit`,
    level by level (check_depth's answer at a third of its cost, which counts on a 10,000-step file)."""
    level = [doc] if type(doc) is dict or type(doc) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list = []
        for value in level:
            below.extend([c for c in (value.values() if type(value) is dict else value)
                          if type(c) is dict or type(c) is list])
        level = below
    return False


def load_json_text(text: str, where: str = "", limits: Limits = DEFAULT_LIMITS) -> Any:
    """One JSON document; a syntax error (with line and column) or a duplicate key is an InputError."""
    try:
        doc = json.loads(text, object_pairs_hook=_strict_object, parse_constant=_no_constant,
                         parse_int=partial(_json_int, limits.max_number_digits))
    except _TooLong as exc:
        raise InputError(where or ROOT,
                         "not valid JSON: " + number_too_long(exc.digits, limits.max_number_digits)) from None
    except json.JSONDecodeError as exc:
        raise InputError(where or ROOT, f"not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:  # NaN, Infinity
        raise InputError(where or ROOT, f"not valid JSON: {exc}") from None
    except RecursionError:
        raise InputError(where or ROOT, "not valid JSON: nested too deeply") from None
    except _DuplicateJSONKey as dup:
        duplicate = dup.key
    else:
        if _levels_deeper_than(doc, limits.max_depth):
            check_depth(doc, where, limits.max_depth)  # which refuses it
        if "\\u" in text and _has_surrogate_escape(text):
            doc = _replace_surrogates(doc)
        return doc
    # JSON is YAML: the YAML reader names the duplicate's path and both places.
    try:
        load_yaml_text(text, where, limits)
    except InputError as exc:
        if "duplicate key" in exc.reason:
            raise
    raise InputError(where or ROOT, f"found duplicate key {duplicate!r}")


def load_text(text: str, where: str = "", *, json_format: bool = False, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Parse one document: JSON with `json_format`, else YAML (JSON is valid YAML too)."""
    return load_json_text(text, where, limits) if json_format else load_yaml_text(text, where, limits)


def load_file(path: Union[str, Path], limits: Limits = DEFAULT_LIMITS) -> Any:
    """Read and parse a YAML or JSON (`*.json`) file; every problem is an InputError naming the file."""
    name = str(path)
    try:
        text = read_bytes(path, limits=limits).decode("utf-8")
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror or exc}", name) from None
    except UnicodeDecodeError as exc:
        raise InputError("", f"not UTF-8 text: {exc.reason} at byte {exc.start}", name) from None
    try:
        return load_text(text, json_format=name.lower().endswith(".json"), limits=limits)
    except InputError as exc:
        raise exc.in_file(name) from None


def load_file_documents(path: Union[str, Path], limits: Limits = DEFAULT_LIMITS) -> list[Any]:
    """Every document of a YAML file (a `.json` file is one), as `load_file` reads one."""
    name = str(path)
    if name.lower().endswith(".json"):
        return [load_file(path, limits)]
    try:
        text = read_bytes(path, limits=limits).decode("utf-8")
    except OSError as exc:
        raise InputError("", f"cannot read file: {exc.strerror or exc}", name) from None
    except UnicodeDecodeError as exc:
        raise InputError("", f"not UTF-8 text: {exc.reason} at byte {exc.start}", name) from None
    try:
        return load_yaml_documents(text, limits=limits)
    except InputError as exc:
        raise exc.in_file(name) from None


def parse_file(path: Union[str, Path], parse: Callable[[Any], T], limits: Limits = DEFAULT_LIMITS) -> T:
    """`parse(document)` of the file at `path`; an InputError from either step names the file."""
    doc = load_file(path, limits)
    try:
        return parse(doc)
    except InputError as exc:
        raise exc.in_file(str(path)) from None


# -- writing ---------------------------------------------------------------------------------------------
def _is_scalar(value: Any) -> bool:
    """A YAML scalar (null, string, number, boolean)."""
    return value is None or isinstance(value, (str, int, float, bool))


def _is_leaf(value: Any) -> bool:
    """A scalar or a list of scalars."""
    return _is_scalar(value) or (isinstance(value, list) and all(_is_scalar(v) for v in value))


class FoldedText(str):
    """A string `dump_yaml` writes as a folded block (`key: >`), as prose such as a description is written."""


_DUMPER: Optional[type] = None


def _dumper() -> type:
    """Block style, except small leaf structures (NUMA id lists, hints, blocks) on one line."""
    global _DUMPER
    if _DUMPER is None:
        import yaml

        class Dumper(yaml.SafeDumper):
            pass

        def represent_list(dumper: Any, data: list) -> Any:
            # lists of scalars inline (`[0, 1]`), others as blocks
            return dumper.represent_sequence(_SEQ_TAG, data, flow_style=all(map(_is_scalar, data)))

        def represent_dict(dumper: Any, data: dict) -> Any:
            # small maps of leaves inline (a hint, a block, a memory table), others as blocks
            flow = 0 < len(data) <= 6 and all(_is_leaf(v) for v in data.values())
            return dumper.represent_mapping(_MAP_TAG, data, flow_style=flow)

        def represent_folded(dumper: Any, data: FoldedText) -> Any:
            # PyYAML falls back to a quoted scalar itself when the text cannot be folded exactly
            return dumper.represent_scalar(_STR_TAG, str(data), style=">")

        Dumper.add_representer(list, represent_list)
        Dumper.add_representer(dict, represent_dict)
        Dumper.add_representer(FoldedText, represent_folded)
        _DUMPER = Dumper
    return _DUMPER


def dump_yaml(doc: Any) -> str:
    """YAML text of `doc`: keys in their current order, leaf structures inline, unicode kept."""
    import yaml

    return yaml.dump(doc, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=120)
