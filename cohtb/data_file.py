"""The project's data files read by one rule: a file parsed (TOML or JSON), then checked against a pydantic model
of its fields. A file that cannot be read or parsed, or a field missing, unknown or of another type, is one line
naming the file and the field (a CohtbError: exit status 2), never a traceback."""

from __future__ import annotations

import functools
import json
import tomllib
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from cohtb.errors import CohtbError


STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


class Record(BaseModel):
    """A data file's record: the fields its model declares and no others, each of its declared type (strict: a
    number written as a string is refused; an array is read as a tuple, as JSON's are), frozen."""
    model_config = STRICT


Model = TypeVar("Model", bound=BaseModel)


def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(Path(path).read_text())
    except OSError as e:
        raise CohtbError(f"{path}: cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise CohtbError(f"{path}: not valid TOML ({e})") from None


def read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except OSError as e:
        raise CohtbError(f"{path}: cannot read: {e.strerror}") from None
    except ValueError as e:
        raise CohtbError(f"{path}: not valid JSON ({e})") from None


def field_error(path: Path, e: ValidationError, at: str = "") -> CohtbError:
    """The first of a validation's errors as one line: the file, the field's path (a.b.0.c, under `at` when the
    validated part is a field of the file), what is wrong."""
    err = e.errors()[0]
    if err["type"] == "json_invalid":
        return CohtbError(f"{path}: not valid JSON ({err['ctx'].get('error', err['msg'])})")
    where = ".".join(str(x) for x in ([at] if at else []) + list(err["loc"]))
    return CohtbError(f"{path}: field '{where}': {err['msg']}")


@functools.cache
def _adapter(model) -> TypeAdapter:
    return TypeAdapter(model)


def validated(model: type[Model], doc, path: Path, at: str = "") -> Model:
    """`doc` (a parsed file, or its field `at`) as a `model` (a Record, or a dataclass with a strict
    __pydantic_config__), or one line naming the file and the field. Validated as the JSON it reads as, so a TOML
    file and a JSON file follow the same strict rules."""
    try:
        # a value JSON has no type for (a TOML date or time) becomes an object, which no declared field accepts
        return _adapter(model).validate_json(json.dumps(doc, default=lambda v: {"toml value": str(v)}))
    except ValidationError as e:
        raise field_error(path, e, at) from None
