"""The parts of the experiments command (`scripts/experiments.py`), a module for each concern:
`jobs` (the job list), `running` (training and testing jobs), `run_folders` (what a run leaves,
`collect`), `packs` (runs carried between machines), `tables` (what every summary is made of),
one summary per task (`listops`, `snli`, `sst_sick`, `parsing`) and `pages` (`summarize`).
"""
