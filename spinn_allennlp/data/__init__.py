"""Data pieces every tree task shares: PTB conventions, a PTB-style tokenizer, the base tree
reader with its skip accounting, the transitions field, data paths and tree rendering."""
