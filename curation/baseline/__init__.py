"""The human baseline campaign (TRIAD §5.1, App. E.7, Table 7): people answer a seeded subset stratified by
language, tier and leaf, in the Standard (options shown) and open-ended (no options) forms, and the report puts
human Acc_q and Acc_g, with group-level bootstrap intervals, beside the random baseline.
"""
