import os
import re

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
