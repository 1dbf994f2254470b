"""Source columns → raw fields, with a reason for every row a column cannot supply.

A source column may hold any Arrow type. Each coercion returns the field (null where the
row's value cannot be used) and the per-row reasons (null where the value is fine), so one
bad cell flags its own row and never the whole source. Nothing here guesses: a value is
converted only when the conversion is exact (a number as text, an integral float as an
integer, JSON text of a list of strings as options).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from oracleproto.corpus.sources.plain import plain_column

TEXT = pa.string()
OPTIONS = pa.list_(pa.string())
INTEGER = pa.int64()
_INTEGER_TEXT = r"^[+-]?\d{1,18}(?:\.0*)?$"  # fits int64; "2.0" is 2, as a float column's 2.0 is
_ZERO_FRACTION = r"\.0*$"


def _kind(typ: pa.DataType) -> str:
    """How a message names a type: a list, an object (struct), a number…"""
    if pa.types.is_list(typ):  # plain layouts: every list kind is a list by now
        return "a list"
    if pa.types.is_struct(typ) or pa.types.is_map(typ):
        return "an object"
    if pa.types.is_boolean(typ):
        return "a boolean"
    return f"of type {typ}"


def first_reason(*reasons: pa.Array | None) -> pa.Array | None:
    """Per row, the first non-null reason among ``reasons`` (None entries are skipped)."""
    given = [r for r in reasons if r is not None]
    if not given:
        return None
    return given[0] if len(given) == 1 else pc.coalesce(*given)


def _unusable(values: pa.Array, message: str) -> pa.Array:
    """Reasons when no value of a column can be used: ``message`` on every non-null row."""
    return pc.if_else(values.is_valid(), pa.scalar(message, TEXT), pa.scalar(None, TEXT))


def _decode_utf8(values: pa.Array, name: str) -> tuple[pa.Array, pa.Array | None]:
    """Binary → text; rows that are not valid UTF-8 become null with a reason."""
    try:
        return values.cast(TEXT), None
    except pa.ArrowInvalid:
        pass  # some row is not UTF-8: find which, row by row (only on this rare path)
    texts: list[str | None] = []
    reasons: list[str | None] = []
    for raw in values.to_pylist():
        try:
            texts.append(None if raw is None else raw.decode("utf-8"))
            reasons.append(None)
        except UnicodeDecodeError as exc:
            texts.append(None)
            reasons.append(f"{name} is not UTF-8 text (byte {exc.start})")
    return pa.array(texts, TEXT), pa.array(reasons, TEXT)


def text_field(values: pa.Array | pa.ChunkedArray, name: str) -> tuple[pa.Array, pa.Array | None]:
    """A column as text: strings as they are, numbers as their decimal text, dates and
    timestamps as ``YYYY-MM-DD``, bytes when valid UTF-8; lists, objects and booleans are
    flagged per row."""
    values = _contiguous(values)
    typ = values.type
    if typ == TEXT:
        return values, None
    if pa.types.is_binary(typ):
        return _decode_utf8(values, name)
    if pa.types.is_null(typ):
        return pa.nulls(len(values), TEXT), None
    if pa.types.is_timestamp(typ) or pa.types.is_date(typ):
        dates, reasons = _calendar_dates(values, name)
        return pc.strftime(dates, "%Y-%m-%d"), reasons
    if pa.types.is_floating(typ):
        return _float_text(values, name)
    if pa.types.is_integer(typ) or pa.types.is_decimal(typ):
        return pc.cast(values, TEXT), None
    return pa.nulls(len(values), TEXT), _unusable(values, f"{name} is {_kind(typ)}, not text")


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
# Seconds since 1970 of 0001-01-02 and 9999-12-30 (a day inside the years 1-9999, so a time
# zone cannot push a value out): no calendar date text lies outside them.
_FIRST_SECOND, _LAST_SECOND = -62_135_510_400, 253_402_128_000


def _calendar_dates(values: pa.Array, name: str) -> tuple[pa.Array, pa.Array | None]:
    """Dates and timestamps (local date where a time zone is given) as date32. A timestamp
    or date64 outside the years 1-9999 is null with a reason: Arrow's cast would wrap it
    round to some other date."""
    if pa.types.is_date32(values.type):
        return values, None
    if pa.types.is_date64(values.type):  # milliseconds, maybe not at midnight: a timestamp
        values = values.cast(pa.int64()).cast(pa.timestamp("ms"))
    typ = values.type
    per_second = _PER_SECOND[typ.unit]
    first, last = _FIRST_SECOND * per_second, _LAST_SECOND * per_second
    if per_second == 1_000_000_000:  # int64 nanoseconds span only the years 1677-2262
        return pc.cast(values, pa.date32()), None
    counts = values.cast(pa.int64())
    outside = pc.or_(pc.less(counts, first), pc.greater(counts, last))
    if not pc.any(outside).as_py():
        return pc.cast(values, pa.date32()), None
    inside = pc.if_else(outside, pa.scalar(None, typ), values)
    reasons = pc.if_else(outside, pa.scalar(f"{name} is a date outside the years 1-9999", TEXT), pa.scalar(None, TEXT))
    return pc.cast(inside, pa.date32()), reasons


def _float_text(values: pa.Array, name: str) -> tuple[pa.Array, pa.Array | None]:
    """Floats as their decimal text; NaN is missing (pandas' missing value, as in
    ``integer_field``); an infinity is no value a text field takes, and is flagged."""
    values = values.cast(pa.float64())
    infinite = pc.and_(pc.invert(pc.is_finite(values)), pc.invert(pc.is_nan(values)))
    finite = pc.if_else(pc.is_finite(values), values, pa.scalar(None, pa.float64()))
    reasons = pc.if_else(infinite, pa.scalar(f"{name} is not a finite number", TEXT), pa.scalar(None, TEXT))
    return pc.cast(finite, TEXT), reasons if pc.any(infinite).as_py() else None


def integer_field(values: pa.Array | pa.ChunkedArray, name: str) -> tuple[pa.Array, pa.Array | None]:
    """A column as int64: integers; integral floats (NaN = missing); text holding an integer
    (blank = missing, as an empty CSV cell). Anything else is flagged per row."""
    values = _contiguous(values)
    typ = values.type
    if pa.types.is_integer(typ) or pa.types.is_null(typ):
        try:
            return values.cast(INTEGER), None
        except pa.ArrowInvalid:  # uint64 beyond int64
            return pa.nulls(len(values), INTEGER), _unusable(values, f"{name} is out of the integer range")
    if pa.types.is_floating(typ):
        typ = pa.float64()  # half floats have no arithmetic kernels
        values = values.cast(typ)
        values = pc.if_else(pc.is_nan(values), pa.scalar(None, typ), values)
        integral = pc.and_(pc.equal(pc.floor(values), values), pc.less_equal(pc.abs(values), 2.0**62))
        reasons = pc.if_else(pc.invert(integral), pa.scalar(f"{name} is not an integer", TEXT), pa.scalar(None, TEXT))
        return pc.cast(pc.if_else(integral, values, pa.scalar(None, typ)), INTEGER), reasons
    if not (pa.types.is_string(typ) or pa.types.is_binary(typ)):
        return pa.nulls(len(values), INTEGER), _unusable(values, f"{name} is {_kind(typ)}, not an integer")
    text, reasons = text_field(values, name)
    text = pc.utf8_trim_whitespace(text)
    blank = pc.equal(pc.utf8_length(text), 0)
    integral = pc.match_substring_regex(text, _INTEGER_TEXT)
    digits = pc.replace_substring_regex(pc.if_else(integral, text, pa.scalar(None, TEXT)), _ZERO_FRACTION, "")
    number = pc.cast(digits, INTEGER)
    bad = pc.and_(pc.invert(integral), pc.invert(blank))
    quoted = pc.binary_join_element_wise(f"{name} is not an integer (", text, ")", "")
    return number, first_reason(reasons, pc.if_else(bad, quoted, pa.scalar(None, TEXT)))


def _parse_list_text(text: str | None) -> tuple[list[str] | None, str | None]:
    """A list of strings written as JSON text (``["a", "b"]``) or as a Python literal
    (``['a', 'b']``, what pandas' to_csv writes for a list); anything else is a reason."""
    if text is None:
        return None, None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as exc:
        try:
            parsed = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            return None, f"options is not a JSON array ({reason})"
    if not isinstance(parsed, list) or not all(isinstance(x, str) for x in parsed):
        return None, "options is not a JSON array of strings"
    try:
        "".join(parsed).encode("utf-8")
    except UnicodeEncodeError:  # JSON may escape a lone surrogate ("\\ud800"); UTF-8 cannot hold one
        return None, "options holds a label that is not valid Unicode text"
    return parsed, None


def options_field(values: pa.Array | pa.ChunkedArray, name: str = "options") -> tuple[pa.Array, pa.Array | None]:
    """Options as a list of strings: a list column, or JSON text per row (CSV, SQLite)."""
    values = _contiguous(values)
    typ = values.type
    if pa.types.is_list(typ) and pa.types.is_nested(typ.value_type):
        return pa.nulls(len(values), OPTIONS), _unusable(values, "options holds lists or objects, not labels")
    if pa.types.is_list(typ):
        labels, label_reasons = text_field(values.flatten(), "an option label")
        mask = values.is_null() if values.null_count else None
        options = pa.ListArray.from_arrays(_zero_based_offsets(values), labels, mask=mask)
        return options, None if label_reasons is None else _row_reasons(values, label_reasons)
    text, reasons = text_field(values, name)
    parsed = [_parse_list_text(t) for t in text.to_pylist()]
    options = pa.array([p[0] for p in parsed], OPTIONS)
    return options, first_reason(reasons, pa.array([p[1] for p in parsed], TEXT))


def _contiguous(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One plain-layout array starting at offset 0 (list and buffer arithmetic need that)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    values = plain_column(values)
    return pa.concat_arrays([values]) if values.offset else values


def _zero_based_offsets(lists: pa.ListArray) -> pa.Array:
    offsets = lists.offsets
    return pc.subtract(offsets, offsets[0]) if len(offsets) and offsets[0].as_py() else offsets


def _row_reasons(lists: pa.ListArray, item_reasons: pa.Array) -> pa.Array:
    """Per row, the first reason among its items."""
    n = len(lists)
    parents = pc.list_parent_indices(lists).to_numpy()
    flagged = np.flatnonzero(item_reasons.is_valid().to_numpy(zero_copy_only=False))
    reasons = np.full(n, None, dtype=object)
    for item in flagged[::-1]:  # reversed: the first item's reason is written last
        reasons[parents[item]] = item_reasons[int(item)].as_py()
    return pa.array(reasons.tolist(), TEXT)


Coercion = Callable[[pa.Array | pa.ChunkedArray, str], tuple[pa.Array, pa.Array | None]]


def source_fields(
    batch: pa.Table, coercions: Mapping[str, Coercion], required: Sequence[str]
) -> tuple[dict[str, pa.Array], pa.Array | None]:
    """The columns named in ``coercions`` that ``batch`` has, coerced; and per row the first
    reason a field is unusable (a missing required column first, for every row)."""
    present = set(batch.column_names)
    reasons: list[pa.Array | None] = []
    missing = [name for name in required if name not in present]
    if missing:
        reasons.append(pa.array([f"missing column(s) {', '.join(missing)}"] * batch.num_rows, TEXT))
    fields: dict[str, pa.Array] = {}
    for name, coerce in coercions.items():
        if name in present:
            fields[name], reason = coerce(batch.column(name), name)
            reasons.append(reason)
    return fields, first_reason(*reasons)
