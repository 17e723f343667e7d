"""The lab: the code that made our data, trained our benepar model and scores parses, and the
test suite's helpers. It stays in the repository (scripts, benchmarks and tests import it from
the repository root) and is not part of the installed package."""
