import os
import re
from typing import List

_VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def expand_path(path) -> str:
    """Expands ``${VAR}`` and ``${VAR:-default}`` in a data path from the environment, so a
    config can name bundled data by default and still be pointed elsewhere by a variable
    (jsonnet's ``std.extVar`` has no default)."""

    def replace(match: "re.Match") -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value:
            return value
        if default is not None:
            return default
        raise ValueError(f"environment variable {name} is not set and {path!r} has no default")

    return _VARIABLE.sub(replace, str(path))


def resolve_data_path(path) -> str:
    """:func:`expand_path`, and for a local file that doesn't exist a `FileNotFoundError`
    saying what to do: which variable to set when the path is a default (the configs'
    defaults are relative to the repository root, so they resolve only when `allennlp` runs
    there), and that a relative path is read from the current directory. URLs and other
    remote paths are left to AllenNLP's `cached_path`."""
    expanded = expand_path(path)
    if "://" in expanded or os.path.exists(expanded):
        return expanded
    defaulted: List[str] = []
    given: List[str] = []
    for match in _VARIABLE.finditer(str(path)):
        (given if os.environ.get(match.group(1)) else defaulted).append(match.group(1))
    where = (
        f" (relative to the current directory, {os.getcwd()})"
        if not os.path.isabs(expanded)
        else ""
    )
    message = f"data file {expanded!r} not found{where}."
    if defaulted:
        names = " / ".join(defaulted)
        message += (
            f" It is the default of {str(path)!r}: set {names} to the file's path, or run "
            "from the directory the default is relative to (for the bundled SNLI data, the "
            "repository root)."
        )
    elif given:
        message += f" It comes from {' / '.join(f'{name}={os.environ[name]}' for name in given)}."
    raise FileNotFoundError(message)
