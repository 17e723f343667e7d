"""The rule book's errors as AllenNLP reports configuration errors: the rules themselves are
written once in ``spinn_core.rules``, in plain Python; the plugin's components call them inside
:func:`configuration_errors`, so a config's reader gets a `ConfigurationError`."""

import contextlib
from typing import Iterator

from allennlp.common.checks import ConfigurationError

from spinn_core import rules


class SettingsError(ConfigurationError, rules.SettingsError):
    """Settings that cannot work together, or one that would not be read (the rule book's
    error, ``spinn_core.rules``): an AllenNLP ConfigurationError, and a ValueError for Python
    callers."""


@contextlib.contextmanager
def configuration_errors() -> Iterator[None]:
    """The rule book's errors raised inside as AllenNLP's `ConfigurationError` (a
    :class:`SettingsError`)."""
    try:
        yield
    except rules.SettingsError as error:
        if isinstance(error, ConfigurationError):
            raise
        raise SettingsError(str(error)) from None
