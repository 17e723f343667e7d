"""Helpers of this repository's test suite and scripts (small configs of every shipped variant, the
AllenNLP command line in a subprocess, hostile input files, a tiny benepar model, a headless
browser): not part of the installed package."""
